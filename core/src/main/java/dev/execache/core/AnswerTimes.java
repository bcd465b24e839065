package dev.execache.core;

import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How long each tool took to answer its recent calls that reached it (misses and calls made
 * around the cache), in this process. The fastest of the last {@link #KEPT} says whether storing
 * its answers pays, once there are {@link #ENOUGH}: what a call costs when nothing else is in the
 * way. A busy machine, a cold server or a cold JIT only ever add time (a first call measured here
 * took 380 ms, the tenth 0.09 ms), so the median of the first few calls said "slow" of a local file
 * read; the fastest recent one does not.
 */
final class AnswerTimes {
    static final int KEPT = 15;
    static final int ENOUGH = 3;

    private final ConcurrentHashMap<String, Recent> byTool = new ConcurrentHashMap<>();

    void record(String tool, Duration took) {
        byTool.computeIfAbsent(tool, name -> new Recent()).add(took.toNanos());
    }

    /** The fastest of the tool's recent answer times; empty before its first call. */
    Optional<Duration> fastest(String tool) {
        Recent recent = byTool.get(tool);
        return recent == null ? Optional.empty() : recent.fastest();
    }

    /** How many of the tool's answer times are kept (at most {@link #KEPT}). */
    int count(String tool) {
        Recent recent = byTool.get(tool);
        return recent == null ? 0 : recent.count();
    }

    /** A ring of the last {@link #KEPT} times, in nanoseconds. */
    private static final class Recent {
        private final long[] nanos = new long[KEPT];
        private int count;
        private int next;

        synchronized void add(long took) {
            nanos[next] = took;
            next = (next + 1) % KEPT;
            count = Math.min(count + 1, KEPT);
        }

        synchronized int count() {
            return count;
        }

        synchronized Optional<Duration> fastest() {
            return count == 0 ? Optional.empty() : Optional.of(Duration.ofNanos(Arrays.stream(nanos, 0, count).min()
                    .orElseThrow()));
        }
    }
}
