package dev.execache.mcp.server.http;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * What the cache did in each step of time (hits, misses, shared, failed, time saved), kept as
 * the difference between two readings of the store's totals, so that on a shared store it is
 * the fleet's. At most {@code capacity} steps are kept: memory stays bounded however long the
 * server runs.
 */
final class FigureHistory {
    /** The store's totals at one moment. */
    record Totals(long hits, long misses, long shared, long failed, long savedNanos) {
        Totals minus(Totals earlier) {
            return new Totals(hits - earlier.hits, misses - earlier.misses, shared - earlier.shared,
                    failed - earlier.failed, savedNanos - earlier.savedNanos);
        }

        boolean anyNegative() {
            return hits < 0 || misses < 0 || shared < 0 || failed < 0 || savedNanos < 0;
        }
    }

    /** What happened between {@code start} and {@code end}. */
    record Step(Instant start, Instant end, Totals counted) {
        double seconds() {
            return Duration.between(start, end).toMillis() / 1000.0;
        }
    }

    private final Duration step;
    private final int capacity;
    private final Deque<Step> steps = new ArrayDeque<>();
    private Instant readAt;
    private Totals read;

    FigureHistory(Duration step, int capacity) {
        if (step.isNegative() || step.isZero()) {
            throw new IllegalArgumentException("step must be positive, not " + step);
        }
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1, not " + capacity);
        }
        this.step = step;
        this.capacity = capacity;
    }

    Duration step() {
        return step;
    }

    int capacity() {
        return capacity;
    }

    /**
     * Takes a reading of the totals; once a step has passed since the last kept reading, the
     * difference becomes a step. Totals that went down (the counters were zeroed) start afresh.
     */
    synchronized void observe(Instant now, Totals totals) {
        if (read == null) {
            readAt = now;
            read = totals;
            return;
        }
        if (Duration.between(readAt, now).compareTo(step) < 0) {
            return;
        }
        Totals counted = totals.minus(read);
        if (!counted.anyNegative()) {
            steps.addLast(new Step(readAt, now, counted));
            while (steps.size() > capacity) {
                steps.removeFirst();
            }
        }
        readAt = now;
        read = totals;
    }

    /** The steps kept, oldest first. */
    synchronized List<Step> steps() {
        return new ArrayList<>(steps);
    }

    /** What happened since the last step ended, up to {@code now}; null before the first reading. */
    synchronized Step sinceLast(Instant now, Totals totals) {
        if (read == null || !now.isAfter(readAt)) {
            return null;
        }
        Totals counted = totals.minus(read);
        return counted.anyNegative() ? null : new Step(readAt, now, counted);
    }
}
