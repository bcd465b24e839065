package dev.execache.core;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The store as the policy uses it: every method returns a fallback instead of failing, so a
 * store's failure never fails a run. A failing call is counted and logged once per outage;
 * errors counted while the store was down are added to its counter once it answers again.
 */
final class StoreGuard {
    private static final System.Logger LOG = System.getLogger("dev.execache.core");

    private final CacheStore store;
    private final AtomicBoolean down = new AtomicBoolean();
    private final AtomicLong unreportedErrors = new AtomicLong();

    StoreGuard(CacheStore store) {
        this.store = store;
    }

    Optional<CacheEntry> get(String key) {
        return call("read an entry", () -> store.get(key), Optional.empty());
    }

    Optional<CacheEntry> peek(String key) {
        return call("read an entry", () -> store.peek(key), Optional.empty());
    }

    /** @return the keys evicted to keep the group's bound, or empty if the store failed */
    Optional<List<String>> put(CacheEntry entry, GroupBound bound) {
        return call("store a result", () -> Optional.of(bound == null ? putPlain(entry) : store.put(entry, bound)),
                Optional.empty());
    }

    private List<String> putPlain(CacheEntry entry) {
        store.put(entry);
        return List.of();
    }

    /** @return whether the counters were added */
    boolean count(String tool, Map<Counter, Long> deltas) {
        return call("count", () -> {
            store.increment(tool, deltas);
            return true;
        }, false);
    }

    boolean remove(String key) {
        return call("remove an entry", () -> store.remove(key), false);
    }

    int removeByTool(String tool) {
        return call("remove entries of a tool", () -> store.removeByTool(tool), 0);
    }

    int removeByPattern(String keyGlob) {
        return call("clear entries", () -> store.removeByPattern(keyGlob), 0);
    }

    int size() {
        return call("count entries", store::size, 0);
    }

    long estimatedBytes() {
        return call("estimate size", store::estimatedBytes, 0L);
    }

    Optional<Map<String, String>> lastSeenVersions() {
        return call("read tool versions", () -> Optional.of(store.lastSeenVersions()), Optional.empty());
    }

    /** @return whether the versions were recorded */
    boolean recordVersions(Map<String, String> versions) {
        return call("record tool versions", () -> {
            store.recordVersions(versions);
            return true;
        }, false);
    }

    /** The fleet-wide flight of {@code key}, or {@link FlightLease#LOCAL} if the store cannot give one. */
    FlightLease acquireFlight(String key, Duration maxHold) {
        return call("take the flight", () -> {
            try {
                return store.acquireFlight(key, maxHold);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return FlightLease.LOCAL;
            }
        }, FlightLease.LOCAL);
    }

    boolean isDown() {
        return down.get();
    }

    /** The store's counters plus errors it has not been told of yet; only local errors if it is down. */
    Map<Counter, Long> counters() {
        Map<Counter, Long> counters = call("read counters", store::counters, new EnumMap<>(Counter.class));
        Map<Counter, Long> merged = new EnumMap<>(Counter.class);
        for (Counter counter : Counter.values()) {
            merged.put(counter, counters.getOrDefault(counter, 0L));
        }
        merged.merge(Counter.STORE_ERRORS, unreportedErrors.get(), Long::sum);
        return merged;
    }

    Map<String, Map<Counter, Long>> toolCounters() {
        return call("read counters", store::toolCounters, new TreeMap<>());
    }

    private <T> T call(String what, Supplier<T> action, T fallback) {
        try {
            T value = action.get();
            recovered();
            return value;
        } catch (RuntimeException e) {
            failed(what, e);
            return fallback;
        }
    }

    private void failed(String what, RuntimeException e) {
        unreportedErrors.incrementAndGet();
        if (down.compareAndSet(false, true)) {
            LOG.log(Level.WARNING, "cache store failed to " + what + "; running uncached until it answers again: " + reason(e));
        }
    }

    /** The exception and its root cause: clients often wrap the useful part ("connection refused"). */
    static String reason(Throwable e) {
        String message = e.getMessage() == null ? e.toString() : e.getMessage();
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        if (root == e || (root.getMessage() != null && message.contains(root.getMessage()))) {
            return message;
        }
        return message + " (" + root + ")";
    }

    private void recovered() {
        if (down.get() && down.compareAndSet(true, false)) {
            long errors = unreportedErrors.getAndSet(0);
            LOG.log(Level.INFO, "cache store answers again after " + errors + " failed calls; caching resumed");
            try {
                store.increment(Counter.STORE_ERRORS, errors);
            } catch (RuntimeException e) {
                unreportedErrors.addAndGet(errors);
            }
        }
    }
}
