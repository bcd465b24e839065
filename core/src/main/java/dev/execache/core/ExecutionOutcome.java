package dev.execache.core;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * A result and how the cache produced it.
 *
 * @param result what the code returned or how it failed
 * @param status hit, miss, ...
 * @param key the cache key, null when caching was bypassed
 * @param saved latency saved by not running (zero unless a hit or shared)
 * @param toolCalls the tool calls the run made, in order (none for a hit: nothing ran)
 * @param notStoredBecause why a successful run was not stored, or null
 * @param keptOut what the run kept out of the agent's context ({@link KeptOut#NONE} for a run that
 *     called no tools or failed); a hit or shared result gives the figures of the run it came from
 * @param storedAt when the result was made (a hit's entry's creation); null when not known (a bypass)
 * @param expiresAt when the stored result expires; null when it is not stored
 */
public record ExecutionOutcome(ExecutionResult result, CacheStatus status, String key, Duration saved,
        List<ToolCallRecord> toolCalls, String notStoredBecause, KeptOut keptOut, Instant storedAt,
        Instant expiresAt) {
    public ExecutionOutcome {
        Objects.requireNonNull(result, "result must not be null");
        Objects.requireNonNull(status, "status must not be null");
        Objects.requireNonNull(saved, "saved must not be null");
        toolCalls = toolCalls == null ? List.of() : List.copyOf(toolCalls);
        keptOut = keptOut == null ? KeptOut.NONE : keptOut;
    }

    public ExecutionOutcome(ExecutionResult result, CacheStatus status, String key, Duration saved,
            List<ToolCallRecord> toolCalls, String notStoredBecause, KeptOut keptOut) {
        this(result, status, key, saved, toolCalls, notStoredBecause, keptOut, null, null);
    }

    public ExecutionOutcome(ExecutionResult result, CacheStatus status, String key, Duration saved,
            List<ToolCallRecord> toolCalls, String notStoredBecause) {
        this(result, status, key, saved, toolCalls, notStoredBecause, KeptOut.NONE);
    }

    public ExecutionOutcome(ExecutionResult result, CacheStatus status, String key, Duration saved) {
        this(result, status, key, saved, List.of(), null, KeptOut.NONE);
    }

    /** Whether the result came without running the code: from the store (revalidated or not), or from an identical run in flight. */
    public boolean isHit() {
        return status == CacheStatus.HIT || status == CacheStatus.SHARED || status == CacheStatus.REVALIDATED;
    }
}
