package dev.execache.core.spi;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/**
 * The figures a store keeps beside its entries: counted on every call, read by stats, and
 * fleet-wide for a shared store. Behind {@link CacheStore#counters()}, as Caffeine keeps its rare
 * operations behind {@code policy()}, so that a decorator of a store passes them on in one line.
 */
public interface StoreCounters {

    /**
     * Adds to several counters at once (a store over the network does it in one round trip):
     * to the totals and, unless {@code tool} is null, to that tool's own counters too.
     */
    void increment(String tool, Map<Counter, Long> deltas);

    default void increment(Counter counter, long delta) {
        increment(null, Map.of(counter, delta));
    }

    default void increment(Map<Counter, Long> deltas) {
        increment(null, deltas);
    }

    /** Every counter in total, zero for those never incremented. */
    Map<Counter, Long> totals();

    /** The counters of each tool that was ever counted, by tool name (sorted). */
    Map<String, Map<Counter, Long>> perTool();

    /**
     * Sets every counter, in total and per tool, to zero (fleet-wide for a shared store) and
     * starts counting anew from the clock's now. Entries and last-seen versions stay.
     */
    void zero();

    /**
     * When the counters started: when the store first counted (its creation) or was last
     * zeroed; empty if nothing has been counted yet or the store does not know (counted by an
     * execache that did not record it).
     */
    Optional<Instant> countingSince();
}
