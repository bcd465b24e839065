package dev.execache.core;

import dev.execache.core.spi.Counter;
import java.time.Duration;
import java.util.Map;

/**
 * What the cache did for the calls of one tool, as counted by the store (fleet-wide for a
 * shared store).
 *
 * @param failed calls that failed, never stored
 * @param uncacheable calls not cached because the tool may change something
 * @param bypassed calls made with caching off for the tool (a rule, or caching off altogether)
 */
public record ToolStats(long hits, long misses, Duration saved, long invalidations, long shared, long failed,
        long uncacheable, long bypassed) {
    static ToolStats from(Map<Counter, Long> counters) {
        long uncacheable = 0;
        for (Counter counter : Counter.values()) {
            if (counter.uncacheableReason() != null) {
                uncacheable += counters.getOrDefault(counter, 0L);
            }
        }
        return new ToolStats(
                counters.getOrDefault(Counter.HITS, 0L),
                counters.getOrDefault(Counter.MISSES, 0L),
                Duration.ofNanos(counters.getOrDefault(Counter.SAVED_NANOS, 0L)),
                counters.getOrDefault(Counter.INVALIDATIONS, 0L),
                counters.getOrDefault(Counter.SHARED, 0L),
                counters.getOrDefault(Counter.FAILED, 0L),
                uncacheable,
                counters.getOrDefault(Counter.BYPASSED, 0L));
    }

    public double hitRate() {
        long lookups = hits + misses;
        return lookups == 0 ? 0 : (double) hits / lookups;
    }
}
