package dev.execache.core;

import java.time.Duration;
import java.util.Objects;

/**
 * One tool call a run made, as its outcome reports it.
 *
 * @param tool {@code SERVER__TOOL}
 * @param status how the tool cache answered it (bypass: the tool is not cached)
 * @param time how long the call took, as the run waited for it
 * @param error whether the code got an error
 */
public record ToolCallRecord(String tool, CacheStatus status, Duration time, boolean error) {
    public ToolCallRecord {
        Objects.requireNonNull(tool, "tool must not be null");
        Objects.requireNonNull(status, "status must not be null");
        Objects.requireNonNull(time, "time must not be null");
    }
}
