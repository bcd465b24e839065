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
 * <p>Time the process spent on its own work is given back too (the CPU time it used in a slice, at
 * most the slice): a process that has just started, on a busy machine, is loading and compiling the
 * very code that reads the reply, so that time is not Redis's. Taking it for Redis's made a fresh
 * command line give up on a healthy Redis under load (2 s spent, 0.7 s of it given back). A Redis that
 * is paused or gone still costs one budget of idle waiting, and never more than {@link #MAX_STRETCH}.
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
    /** When the current slice began and when it should have ended, or -1 before the first. */
    private long sliceStart = -1;
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
                // kept from running, or running its own work: the larger, and no more than the slice took
                stalled += Math.min(now - sliceStart, Math.max(late, cpu - sliceCpu));
            }
            // else the first slice, whose CPU time is unknown: nothing is given back for it
            sliceCpu = cpu;
        }
        long allowed = Math.min(budget + stalled, budget * MAX_STRETCH);
        long left = start + allowed - now;
        if (left <= 0) {
            return 0;
        }
        long wait = Math.min(left, SLICE.toNanos());
        sliceStart = now;
        sliceEnd = now + wait;
        return wait;
    }

    /** The time given back so far: the process was kept from running, or busy with its own work. */
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
        throw new TimeoutException(stalled < 10 ? "" : " (waited " + stalled + " ms more: this process was busy or kept from running)");
    }
}
