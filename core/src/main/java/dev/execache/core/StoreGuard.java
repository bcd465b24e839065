package dev.execache.core;

import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.CacheStore;
import dev.execache.core.spi.Counter;
import dev.execache.core.spi.FlightLease;
import dev.execache.core.spi.GroupBound;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.Instant;
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
 * store's failure never fails a run. A failing call is counted and logged once per outage of
 * its kind (reads, writes): a store that still reads but cannot write (a full disk, Redis out
 * of memory) logs one warning, not one per call. Errors counted while the store was down are
 * added to its counter once it answers again.
 */
final class StoreGuard {
    private static final System.Logger LOG = System.getLogger("dev.execache.core");

    private final CacheStore store;
    /** Calls fail by kind: a full store still reads, and may still hand out flights, or not. */
    private enum Kind { READ, WRITE, FLIGHT }

    private final AtomicBoolean readsDown = new AtomicBoolean();
    private final AtomicBoolean writesDown = new AtomicBoolean();
    private final AtomicBoolean flightsDown = new AtomicBoolean();
    /** Whether this write outage was logged: it is not while reads are down too (one outage, one line). */
    private volatile boolean writeOutageLogged;
    private final AtomicLong unreportedErrors = new AtomicLong();

    StoreGuard(CacheStore store) {
        this.store = store;
    }

    Optional<CacheEntry> get(String key) {
        return call(Kind.READ, "read an entry", () -> store.get(key), Optional.empty());
    }

    Optional<CacheEntry> peek(String key) {
        return call(Kind.READ, "read an entry", () -> store.peek(key), Optional.empty());
    }

    /** @return the keys evicted to keep the group's bound, or empty if the store failed */
    Optional<List<String>> put(CacheEntry entry, GroupBound bound) {
        return call(Kind.WRITE, "store a result", () -> Optional.of(bound == null ? putPlain(entry) : store.put(entry, bound)),
                Optional.empty());
    }

    private List<String> putPlain(CacheEntry entry) {
        store.put(entry);
        return List.of();
    }

    /** @return whether the counters were added */
    boolean count(String tool, Map<Counter, Long> deltas) {
        return call(Kind.WRITE, "count", () -> {
            store.increment(tool, deltas);
            return true;
        }, false);
    }

    boolean remove(String key) {
        return call(Kind.WRITE, "remove an entry", () -> store.remove(key), false);
    }

    int removeByTool(String tool) {
        return call(Kind.WRITE, "remove entries of a tool", () -> store.removeByTool(tool), 0);
    }

    int removeByTool(String tool, String version) {
        return call(Kind.WRITE, "remove entries of a tool", () -> store.removeByTool(tool, version), 0);
    }

    int removeByPattern(String keyGlob) {
        return call(Kind.WRITE, "clear entries", () -> store.removeByPattern(keyGlob), 0);
    }

    List<CacheEntry> entries() {
        return call(Kind.READ, "list entries", store::entries, List.of());
    }

    int size() {
        return call(Kind.READ, "count entries", store::size, 0);
    }

    long estimatedBytes() {
        return call(Kind.READ, "estimate size", store::estimatedBytes, 0L);
    }

    Optional<Map<String, String>> lastSeenVersions(String scope) {
        return call(Kind.READ, "read tool versions", () -> Optional.of(store.lastSeenVersions(scope)), Optional.empty());
    }

    /** @return whether the versions were recorded */
    boolean recordVersions(String scope, Map<String, String> versions) {
        return call(Kind.WRITE, "record tool versions", () -> {
            store.recordVersions(scope, versions);
            return true;
        }, false);
    }

    /** The fleet-wide flight of {@code key}, or {@link FlightLease#LOCAL} if the store cannot give one. */
    FlightLease acquireFlight(String key, Duration maxHold) {
        return call(Kind.FLIGHT, "take the flight", () -> {
            try {
                return store.acquireFlight(key, maxHold);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return FlightLease.LOCAL;
            }
        }, FlightLease.LOCAL);
    }

    boolean isDown() {
        return readsDown.get() || writesDown.get() || flightsDown.get();
    }

    /** The store's counters plus errors it has not been told of yet; only local errors if it is down. */
    Map<Counter, Long> counters() {
        Map<Counter, Long> counters = call(Kind.READ, "read counters", store::counters, new EnumMap<>(Counter.class));
        Map<Counter, Long> merged = new EnumMap<>(Counter.class);
        for (Counter counter : Counter.values()) {
            merged.put(counter, counters.getOrDefault(counter, 0L));
        }
        merged.merge(Counter.STORE_ERRORS, unreportedErrors.get(), Long::sum);
        return merged;
    }

    Optional<Instant> countingSince() {
        return call(Kind.READ, "read counters", store::countingSince, Optional.empty());
    }

    Map<String, Map<Counter, Long>> toolCounters() {
        return call(Kind.READ, "read counters", store::toolCounters, new TreeMap<>());
    }

    private <T> T call(Kind kind, String what, Supplier<T> action, T fallback) {
        try {
            T value = action.get();
            recovered(kind);
            return value;
        } catch (RuntimeException e) {
            failed(kind, what, e);
            return fallback;
        }
    }

    private AtomicBoolean down(Kind kind) {
        return switch (kind) {
            case READ -> readsDown;
            case WRITE -> writesDown;
            case FLIGHT -> flightsDown;
        };
    }

    private void failed(Kind kind, String what, RuntimeException e) {
        unreportedErrors.incrementAndGet();
        if (!down(kind).compareAndSet(false, true)) {
            return;
        }
        if (kind == Kind.READ) {
            LOG.log(Level.WARNING, "cache store failed to " + what + "; running uncached until it answers again: " + reason(e));
        } else if (kind == Kind.WRITE && !readsDown.get()) {
            writeOutageLogged = true;
            LOG.log(Level.WARNING, "cache store failed to " + what + "; it still reads, but stores and counts nothing"
                    + " until it can write again: " + reason(e));
        } else if (kind == Kind.FLIGHT && !readsDown.get()) {
            LOG.log(Level.WARNING, "cache store failed to " + what + "; identical runs in other processes may run at"
                    + " the same time until it answers again: " + reason(e));
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
        return message + " (" + (root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage()) + ")";
    }

    private void recovered(Kind kind) {
        AtomicBoolean down = down(kind);
        if (down.get() && down.compareAndSet(true, false)) {
            long errors = unreportedErrors.getAndSet(0);
            if (kind == Kind.READ || writeOutageLogged) {
                writeOutageLogged = false;
                LOG.log(Level.INFO, "cache store answers again after " + errors + " failed calls; caching resumed");
            }
            try {
                store.increment(Counter.STORE_ERRORS, errors);
            } catch (RuntimeException e) {
                unreportedErrors.addAndGet(errors);
            }
        }
    }
}
