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
 */
final class Budget {
    static final Duration SLICE = Duration.ofMillis(50);
    /** Waking up to this late is ordinary timer slack, not a stall. */
    static final Duration SLACK = Duration.ofMillis(2);
    static final int MAX_STRETCH = 4;

    private final long budget;
    private final LongSupplier nanoTime;
    private final long start;
    private long stalled;
    /** When the current slice should have ended, or -1 before the first. */
    private long sliceEnd = -1;

    Budget(Duration budget, LongSupplier nanoTime) {
        this.budget = budget.toNanos();
        this.nanoTime = nanoTime;
        this.start = nanoTime.getAsLong();
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
            stalled += Math.max(0, now - sliceEnd - SLACK.toNanos());
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
     * @throws TimeoutException when the budget is spent
     */
    static <R> R await(CompletableFuture<R> reply, Duration budget)
            throws TimeoutException, ExecutionException, InterruptedException {
        Budget left = new Budget(budget, System::nanoTime);
        for (long wait = left.nextWait(); wait > 0; wait = left.nextWait()) {
            try {
                return reply.get(wait, TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                // the next slice, if the budget allows one
            }
        }
        throw new TimeoutException();
    }
}
