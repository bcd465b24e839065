package dev.execache.store.redis;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;

/**
 * How long one wait for Redis may last: the budget counts only time this process could run.
 * The waiting thread wakes every {@link #SLICE}; how late it wakes is time the process was
 * stalled (a CPU-starved machine, a garbage-collection pause), and is added to the budget, up
 * to {@link #MAX_STRETCH} budgets in all. So a loaded machine, where every reply comes late
 * because this process (or a Redis on the same machine) gets little CPU, is not taken for a
 * Redis that stopped answering, while a Redis that is paused or gone on an idle machine still
 * costs one budget. The same idea as Hadoop's JvmPauseMonitor (HADOOP-9618): judge a timeout
 * against the time the process actually ran.
 *
 * <p>Lateness while the process itself kept the CPU busy is not a stall: a process that has just
 * started wakes late because its own threads are loading classes and compiling, not because it
 * could not run, so a slice's lateness counts only beyond the CPU time the process used meanwhile.
 */
final class Budget {
    static final Duration SLICE = Duration.ofMillis(50);
    /** Waking up to this late is ordinary timer slack, not a stall. */
    static final Duration SLACK = Duration.ofMillis(2);
    static final int MAX_STRETCH = 4;

    private final long budget;
    private final LongSupplier nanoTime;
    private final LongSupplier cpuTime;
    private final long start;
    private long stalled;
    /** When the current slice should have ended, or -1 before the first. */
    private long sliceEnd = -1;
    /** The process's CPU time when the current slice began, or -1 if unknown (the first slice). */
    private long sliceCpu = -1;

    /** A budget that takes every late wake-up for a stall (for a caller that cannot tell the process's CPU time). */
    Budget(Duration budget, LongSupplier nanoTime) {
        this(budget, nanoTime, () -> -1);
    }

    /**
     * @param cpuTime the CPU time this process has used, in nanoseconds, or -1 if unknown
     */
    Budget(Duration budget, LongSupplier nanoTime, LongSupplier cpuTime) {
        this.budget = budget.toNanos();
        this.nanoTime = nanoTime;
        this.cpuTime = cpuTime;
        this.start = nanoTime.getAsLong();
    }

    /** The CPU time of this process so far, in nanoseconds, or -1 where the platform does not say. */
    static long processCpuTime() {
        return ProcessHandle.current().info().totalCpuDuration().map(Duration::toNanos).orElse(-1L);
    }

    /** The longest wait a budget allows: the Redis client's own timeouts are this, so as not to cut it short. */
    static Duration longest(Duration budget) {
        return budget.multipliedBy(MAX_STRETCH);
    }

    /**
     * How long to wait next, in nanoseconds, at most one slice; 0 once the budget is spent.
     * Each call after the first counts how late the previous slice ended.
     */
    long nextWait() {
        long now = nanoTime.getAsLong();
        if (sliceEnd >= 0) {
            // read only once a reply takes longer than a slice: a hit does not pay for it
            long cpu = cpuTime.getAsLong();
            long late = Math.max(0, now - sliceEnd - SLACK.toNanos());
            if (cpu < 0) {
                stalled += late;
            } else if (sliceCpu >= 0) {
                stalled += Math.max(0, late - (cpu - sliceCpu));
            }
            // else the first slice, whose CPU time is unknown: its lateness is not taken for a stall
            sliceCpu = cpu;
        }
        long allowed = Math.min(budget + stalled, budget * MAX_STRETCH);
        long left = start + allowed - now;
        if (left <= 0) {
            return 0;
        }
        long wait = Math.min(left, SLICE.toNanos());
        sliceEnd = now + wait;
        return wait;
    }

    /** The time counted as stalled so far. */
    Duration stalled() {
        return Duration.ofNanos(stalled);
    }

    /**
     * Waits for {@code reply} within {@code budget} as above.
     *
     * @throws TimeoutException when the budget is spent; its message says how long the process
     *     was stalled meanwhile, if it was
     */
    static <R> R await(CompletableFuture<R> reply, Duration budget)
            throws TimeoutException, ExecutionException, InterruptedException {
        Budget left = new Budget(budget, System::nanoTime, Budget::processCpuTime);
        for (long wait = left.nextWait(); wait > 0; wait = left.nextWait()) {
            try {
                return reply.get(wait, TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                // the next slice, if the budget allows one
            }
        }
        long stalled = left.stalled().toMillis();
        throw new TimeoutException(stalled < 10 ? "" : " (waited " + stalled + " ms more: this process was kept from running)");
    }
}
