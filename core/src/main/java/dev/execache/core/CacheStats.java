package dev.execache.core;

import dev.execache.core.spi.CacheStore;
import dev.execache.core.spi.Counter;
import dev.execache.core.spi.StoreCounters;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the cache has done, as counted by its store (fleet-wide for a shared store): code
 * executions and tool calls together, each tool's calls apart in {@code tools}, and each agent's
 * runs and calls apart in {@code agents}.
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
        Map<String, ToolStats> tools,
        long failed,
        long bypassed,
        Map<String, Long> uncacheable,
        Instant countingSince,
        Map<String, ToolStats> agents,
        long toolAnswerBytes,
        long keptOutBytes,
        long calls,
        Map<String, Long> removalsByCause,
        long revalidations,
        Duration revalidationSaved,
        long revalidationsChanged) {

    /**
     * @param uncacheable runs and calls not stored, by reason ({@link Counter#uncacheableReason()}), every reason present
     * @param countingSince when the counters started (the store's creation or its last zeroing); null if unknown
     * @param agents by agent (see {@link Agents}): at most {@link StoreCounters#MAX_AGENTS}
     *     names and {@link Agents#OTHER}
     * @param toolAnswerBytes bytes of tool answers code consumed in runs that ran (hits call no tools)
     * @param keptOutBytes bytes code mode kept out of agents' contexts, hits included (see {@link KeptOut})
     * @param calls every run and tool call, however it was answered (looked up or not)
     * @param removalsByCause entries removed before a bound pushed them out, by {@link RemovalCause#label()}
     *     (every cause present): {@code write}, {@code version}, {@code resource} and {@code hand} add up to
     *     {@link #invalidations}, {@code expiry} is {@link #expirations}
     * @param revalidations stale runs answered from the store after their tool calls gave the same answers again
     *     (neither hits nor misses)
     * @param revalidationSaved the time those saved: each run's own time less its revalidation's
     * @param revalidationsChanged stale runs whose tool calls gave another answer, so they ran again (misses too)
     */
    public CacheStats {
        revalidationSaved = revalidationSaved == null ? Duration.ZERO : revalidationSaved;
        removalsByCause = removalsByCause == null ? Map.of()
                : Collections.unmodifiableMap(new LinkedHashMap<>(removalsByCause));
        tools = tools == null ? Map.of() : Collections.unmodifiableMap(new TreeMap<>(tools));
        agents = agents == null ? Map.of() : Collections.unmodifiableMap(new TreeMap<>(agents));
        uncacheable = uncacheable == null ? Map.of() : Collections.unmodifiableMap(new TreeMap<>(uncacheable));
    }

    /**
     * What {@code store} has counted, read from it now; for a process that watches a store it
     * does not run anything through (a server's monitoring). Throws what the store throws.
     */
    public static CacheStats of(CacheStore store) {
        StoreCounters counters = store.counters();
        return from(counters.totals(), counters.perTool(), counters.perAgent(), store.size(), store.estimatedBytes(),
                counters.countingSince().orElse(null));
    }

    static CacheStats from(Map<Counter, Long> counters, Map<String, Map<Counter, Long>> toolCounters,
            Map<String, Map<Counter, Long>> agentCounters, long entries, long estimatedBytes, Instant countingSince) {
        Map<String, ToolStats> tools = new TreeMap<>();
        toolCounters.forEach((tool, counted) -> tools.put(tool, ToolStats.from(counted)));
        Map<String, ToolStats> agents = new TreeMap<>();
        agentCounters.forEach((agent, counted) -> agents.put(agent, ToolStats.from(counted)));
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
                tools,
                counters.getOrDefault(Counter.FAILED, 0L),
                counters.getOrDefault(Counter.BYPASSED, 0L),
                uncacheable(counters),
                countingSince,
                agents,
                counters.getOrDefault(Counter.TOOL_ANSWER_BYTES, 0L),
                counters.getOrDefault(Counter.KEPT_OUT_BYTES, 0L),
                counters.getOrDefault(Counter.CALLS, 0L),
                removalsByCause(counters),
                counters.getOrDefault(Counter.REVALIDATIONS, 0L),
                Duration.ofNanos(counters.getOrDefault(Counter.REVALIDATION_SAVED_NANOS, 0L)),
                counters.getOrDefault(Counter.REVALIDATIONS_CHANGED, 0L));
    }

    static Map<String, Long> removalsByCause(Map<Counter, Long> counters) {
        Map<String, Long> byCause = new LinkedHashMap<>();
        for (RemovalCause cause : RemovalCause.values()) {
            byCause.put(cause.label(), counters.getOrDefault(cause.counter(), 0L));
        }
        return byCause;
    }

    /** {@link #keptOutBytes} as tokens, estimated by {@link KeptOut#estimatedTokens(long)} (bytes / 4). */
    public long keptOutTokens() {
        return KeptOut.estimatedTokens(keptOutBytes);
    }

    static Map<String, Long> uncacheable(Map<Counter, Long> counters) {
        Map<String, Long> byReason = new TreeMap<>();
        for (Counter counter : Counter.values()) {
            if (counter.uncacheableReason() != null) {
                byReason.put(counter.uncacheableReason(), counters.getOrDefault(counter, 0L));
            }
        }
        return byReason;
    }

    /** Runs and calls that succeeded (or were not looked up) but were not stored, whatever the reason. */
    public long uncacheableTotal() {
        return uncacheable.values().stream().mapToLong(Long::longValue).sum();
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
