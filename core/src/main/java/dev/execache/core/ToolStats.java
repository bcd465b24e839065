package dev.execache.core;

import java.time.Duration;
import java.util.Map;

/**
 * What the cache did for the calls of one tool, as counted by the store (fleet-wide for a
 * shared store).
 */
public record ToolStats(long hits, long misses, Duration saved, long invalidations) {
    static ToolStats from(Map<Counter, Long> counters) {
        return new ToolStats(
                counters.getOrDefault(Counter.HITS, 0L),
                counters.getOrDefault(Counter.MISSES, 0L),
                Duration.ofNanos(counters.getOrDefault(Counter.SAVED_NANOS, 0L)),
                counters.getOrDefault(Counter.INVALIDATIONS, 0L));
    }

    public double hitRate() {
        long lookups = hits + misses;
        return lookups == 0 ? 0 : (double) hits / lookups;
    }
}
