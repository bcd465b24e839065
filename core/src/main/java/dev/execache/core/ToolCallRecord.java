package dev.execache.core;

import java.time.Duration;
import java.util.Objects;

/**
 * One tool call a run made, as its outcome reports it.
 *
 * @param tool {@code SERVER__TOOL}
 * @param status how the tool cache answered it (bypass: the tool is not cached, or the call was
 *     cancelled before an answer came)
 * @param time how long the call took, as the run waited for it
 * @param error whether the code got an error
 * @param cancelled null when the call ended by itself; else the run ended while it was in flight,
 *     the call was cancelled, and this says what it may have done
 */
public record ToolCallRecord(String tool, CacheStatus status, Duration time, boolean error, Cancelled cancelled) {
    public ToolCallRecord {
        Objects.requireNonNull(tool, "tool must not be null");
        Objects.requireNonNull(status, "status must not be null");
        Objects.requireNonNull(time, "time must not be null");
    }

    public ToolCallRecord(String tool, CacheStatus status, Duration time, boolean error) {
        this(tool, status, time, error, null);
    }

    /** What a cancelled call may have done. */
    public enum Cancelled {
        /** cancelled before it reached the tool: the tool did nothing */
        NOT_APPLIED,
        /** cancelled after it reached the tool (or when that is unknown): its effect may have happened */
        POSSIBLY_APPLIED
    }
}
