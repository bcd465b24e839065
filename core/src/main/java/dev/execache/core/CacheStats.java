package dev.execache.core;

import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the cache has done, as counted by its store (fleet-wide for a shared store): code
 * executions and tool calls together, and each tool's calls apart in {@code tools}.
 */
public record CacheStats(
        long hits,
        long misses,
        Duration totalSaved,
        long evictions,
        long expirations,
        long invalidations,
        long storeErrors,
        long damaged,
        long entries,
        long estimatedBytes,
        long shared,
        Map<String, ToolStats> tools) {

    public CacheStats {
        tools = tools == null ? Map.of() : Collections.unmodifiableMap(new TreeMap<>(tools));
    }

    static CacheStats from(Map<Counter, Long> counters, Map<String, Map<Counter, Long>> toolCounters,
            long entries, long estimatedBytes) {
        Map<String, ToolStats> tools = new TreeMap<>();
        toolCounters.forEach((tool, counted) -> tools.put(tool, ToolStats.from(counted)));
        return new CacheStats(
                counters.getOrDefault(Counter.HITS, 0L),
                counters.getOrDefault(Counter.MISSES, 0L),
                Duration.ofNanos(counters.getOrDefault(Counter.SAVED_NANOS, 0L)),
                counters.getOrDefault(Counter.EVICTIONS, 0L),
                counters.getOrDefault(Counter.EXPIRATIONS, 0L),
                counters.getOrDefault(Counter.INVALIDATIONS, 0L),
                counters.getOrDefault(Counter.STORE_ERRORS, 0L),
                counters.getOrDefault(Counter.DAMAGED, 0L),
                entries,
                estimatedBytes,
                counters.getOrDefault(Counter.SHARED, 0L),
                tools);
    }

    /** Hits over lookups, 0 when there were none. */
    public double hitRate() {
        long lookups = hits + misses;
        return lookups == 0 ? 0 : (double) hits / lookups;
    }

    /** Latency saved per hit, zero when there were none. */
    public Duration averageSaved() {
        return hits == 0 ? Duration.ZERO : totalSaved.dividedBy(hits);
    }
}
