package dev.execache.core;

import java.time.Instant;
import java.util.Objects;

/**
 * A tool call's answer and how the tool cache produced it.
 *
 * @param status hit, miss, shared; bypass when the tool is not cached
 * @param expiresAt when the cached answer expires (the entry it came from or was stored as); null
 *     when it is not in the cache
 */
public record ToolCallOutcome(ToolResult result, CacheStatus status, Instant expiresAt) {
    public ToolCallOutcome {
        Objects.requireNonNull(result, "result must not be null");
        Objects.requireNonNull(status, "status must not be null");
    }

    /** An answer that is not in the cache. */
    public ToolCallOutcome(ToolResult result, CacheStatus status) {
        this(result, status, null);
    }
}
