package dev.execache.core;

import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How long each tool took to answer its recent calls that reached it (misses and calls made
 * around the cache), in this process. The median of the last {@link #KEPT} says whether storing
 * its answers pays: one slow first call (a cold server) or one quick one does not decide.
 */
final class AnswerTimes {
    static final int KEPT = 15;

    private final ConcurrentHashMap<String, Recent> byTool = new ConcurrentHashMap<>();

    void record(String tool, Duration took) {
        byTool.computeIfAbsent(tool, name -> new Recent()).add(took.toNanos());
    }

    /** The median of the tool's recent answer times; empty before its first call. */
    Optional<Duration> median(String tool) {
        Recent recent = byTool.get(tool);
        return recent == null ? Optional.empty() : recent.median();
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

        synchronized Optional<Duration> median() {
            if (count == 0) {
                return Optional.empty();
            }
            long[] sorted = Arrays.copyOf(nanos, count);
            Arrays.sort(sorted);
            long middle = count % 2 == 1 ? sorted[count / 2] : (sorted[count / 2 - 1] + sorted[count / 2]) / 2;
            return Optional.of(Duration.ofNanos(middle));
        }
    }
}
