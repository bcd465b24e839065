package dev.execache.core;

import java.time.Instant;
import java.util.Objects;

/**
 * A tool call's answer and how the tool cache produced it.
 *
 * @param status hit, miss, shared; bypass when the tool is not cached
 * @param expiresAt when the cached answer expires (the entry it came from or was stored as); null
 *     when it is not in the cache
 * @param storedAt when the answer was made: a hit's entry's creation, a run's end; null when not known
 * @param notCachedBecause why the answer was not (or not taken from, nor put in) the cache, in words for
 *     a person; null when it was cached
 */
public record ToolCallOutcome(ToolResult result, CacheStatus status, Instant expiresAt, Instant storedAt,
        String notCachedBecause) {
    public ToolCallOutcome {
        Objects.requireNonNull(result, "result must not be null");
        Objects.requireNonNull(status, "status must not be null");
    }

    public ToolCallOutcome(ToolResult result, CacheStatus status, Instant expiresAt) {
        this(result, status, expiresAt, null, null);
    }

    /** An answer that is not in the cache, and why. */
    public static ToolCallOutcome notCached(ToolResult result, CacheStatus status, String because) {
        return new ToolCallOutcome(result, status, null, null, because);
    }

    /** An answer that is not in the cache. */
    public ToolCallOutcome(ToolResult result, CacheStatus status) {
        this(result, status, null);
    }
}
