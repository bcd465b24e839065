package dev.execache.core;

import dev.execache.core.spi.Counter;
import java.time.Duration;
import java.util.Map;

/**
 * What the cache did for the calls of one tool, or for the runs and calls of one agent, as
 * counted by the store (fleet-wide for a shared store).
 *
 * @param failed calls that failed, never stored
 * @param uncacheable calls not cached because the tool may change something (for an agent: not
 *     stored, whatever the reason)
 * @param bypassed calls made with caching off for the tool (a rule, or caching off altogether)
 * @param toolAnswerBytes bytes of this tool's answers that code consumed (for an agent: those its runs consumed)
 * @param keptOutBytes bytes code mode kept out of the agent's context (see {@link KeptOut}); 0 for a tool
 * @param calls every call (for an agent: run and call), however it was answered: cached or not, looked up or not
 */
public record ToolStats(long hits, long misses, Duration saved, long invalidations, long shared, long failed,
        long uncacheable, long bypassed, long toolAnswerBytes, long keptOutBytes, long calls) {

    public ToolStats(long hits, long misses, Duration saved, long invalidations, long shared, long failed,
            long uncacheable, long bypassed, long toolAnswerBytes, long keptOutBytes) {
        this(hits, misses, saved, invalidations, shared, failed, uncacheable, bypassed, toolAnswerBytes, keptOutBytes,
                hits + misses + shared + bypassed);
    }

    public ToolStats(long hits, long misses, Duration saved, long invalidations, long shared, long failed,
            long uncacheable, long bypassed) {
        this(hits, misses, saved, invalidations, shared, failed, uncacheable, bypassed, 0, 0);
    }

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
                counters.getOrDefault(Counter.BYPASSED, 0L),
                counters.getOrDefault(Counter.TOOL_ANSWER_BYTES, 0L),
                counters.getOrDefault(Counter.KEPT_OUT_BYTES, 0L),
                counters.getOrDefault(Counter.CALLS, 0L));
    }

    /** {@link #keptOutBytes} as tokens, estimated by {@link KeptOut#estimatedTokens(long)}. */
    public long keptOutTokens() {
        return KeptOut.estimatedTokens(keptOutBytes);
    }

    public double hitRate() {
        long lookups = hits + misses;
        return lookups == 0 ? 0 : (double) hits / lookups;
    }
}
