package dev.execache.core;

import java.util.Objects;

/**
 * A tool call's answer and how the tool cache produced it.
 *
 * @param status hit, miss, shared; bypass when the tool is not cached
 */
public record ToolCallOutcome(ToolResult result, CacheStatus status) {
    public ToolCallOutcome {
        Objects.requireNonNull(result, "result must not be null");
        Objects.requireNonNull(status, "status must not be null");
    }
}
