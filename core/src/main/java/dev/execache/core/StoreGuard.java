package dev.execache.core;

import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.CacheStore;
import dev.execache.core.spi.Counter;
import dev.execache.core.spi.FlightLease;
import dev.execache.core.spi.GroupBound;
import dev.execache.core.spi.StoreCounters;
import dev.execache.core.spi.Telemetry;
import dev.execache.core.spi.WriteGenerations;
import java.lang.System.Logger.Level;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The store as the policy uses it: every method returns a fallback instead of failing, so a
 * store's failure never fails a run.
 *
 * <p>Failures are told apart by what they say about the store, not by which call met them: a
 * store that is <em>down</em> (it cannot be reached, a {@link ConnectException}; it did not
 * answer in time, a {@link TimeoutException}; or it failed a read) serves nothing until it
 * answers again; a store that only <em>refuses writes</em> (a full disk, Redis out of memory
 * under {@code noeviction}, a read-only file) still serves what it holds. Each outage is logged
 * once when it starts, as what it is, and once when it ends, with what it cost: the calls it
 * touched and the store operations that failed (added to {@link Counter#STORE_ERRORS} once the
 * store takes writes again). Counts the store refused are kept here meanwhile, shown by
 * {@code counters()}, and written when it takes them again.
 *
 * <p>The outage is the store's: build one guard per store ({@link #of}) and give it to every face
 * on that store (a {@code serve} process has an executor and a tool cache on it, the resident
 * server an executor per command), so that one outage is one warning and one recovery line per
 * process. Each face reports spans and counts to its own {@link Telemetry} through a view of the
 * guard ({@code forFace}) that shares the store and its outage.
 */
public final class StoreGuard {
    private static final System.Logger LOG = System.getLogger("dev.execache.core");

    /** The outages a store operation failed in during the policy call running on this thread. */
    private static final ThreadLocal<Set<Outage>> CALL = new ThreadLocal<>();

    private enum Op { READ, WRITE, COUNT, FLIGHT }

    private enum State {
        UP, READ_ONLY, DOWN;
    }

    private final CacheStore store;
    private final Outage outage;
    private final Telemetry telemetry;

    private StoreGuard(CacheStore store, Outage outage, Telemetry telemetry) {
        this.store = store;
        this.outage = outage;
        this.telemetry = telemetry;
    }

    /** A guard of {@code store}, to be shared by every face ({@code CachedExecutor}, {@code CachedTool}) built on it. */
    public static StoreGuard of(CacheStore store) {
        return new StoreGuard(Objects.requireNonNull(store, "store must not be null"), new Outage(), Telemetry.NONE);
    }

    /** The store this guards. */
    public CacheStore store() {
        return store;
    }

    /** A face's view of this guard: the same store and outage, spans and counts reported to its own telemetry. */
    StoreGuard forFace(Telemetry reportTo) {
        return new StoreGuard(store, outage, reportTo);
    }

    /** Where spans and counts are reported besides the store. */
    Telemetry telemetry() {
        return telemetry;
    }

    /**
     * Runs one call of the policy (a run of code, a tool call): if any of its store operations
     * fails, the outage counts it as one call, however many operations failed. A call made while
     * another runs on the same thread (code calling a tool) is part of it.
     */
    <T> T oneCall(Supplier<T> work) {
        if (CALL.get() != null) {
            return work.get();
        }
        Set<Outage> failedIn = new HashSet<>(2);
        CALL.set(failedIn);
        try {
            return work.get();
        } finally {
            // cleared, not removed: a removed thread-local is made again on the next call's get, and
            // its map swept for stale entries, on every hit
            CALL.set(null);
            failedIn.forEach(Outage::callFailed);
        }
    }

    Optional<CacheEntry> get(String key) {
        return call(Op.READ, "read an entry", () -> store.get(key), Optional.empty());
    }

    Optional<CacheEntry> peek(String key) {
        return call(Op.READ, "read an entry", () -> store.peek(key), Optional.empty());
    }

    /** @return the keys evicted to keep the group's bound, or empty if the store failed */
    Optional<List<String>> put(CacheEntry entry, GroupBound bound) {
        return call(Op.WRITE, "store a result", () -> Optional.of(bound == null ? putPlain(entry) : store.put(entry, bound)),
                Optional.empty());
    }

    /**
     * What a put on condition did.
     *
     * @param evicted the keys evicted to keep the group's bound; empty if the store failed
     * @param current false when a generation had moved, and nothing was stored
     */
    record Put(Optional<List<String>> evicted, boolean current) {
    }

    /** Stores the entry only if no server in {@code seen} was written since; see {@link WriteGenerations}. */
    Put putIfCurrent(CacheEntry entry, GroupBound bound, Map<String, Long> seen) {
        Optional<Optional<List<String>>> put = call(Op.WRITE, "store a result",
                () -> Optional.of(store.writeGenerations().putIfCurrent(entry, bound, seen)), Optional.empty());
        return put.map(stored -> new Put(Optional.of(stored.orElse(List.of())), stored.isPresent()))
                .orElseGet(() -> new Put(Optional.empty(), true));
    }

    /** The server's write generation, or empty if the store cannot say (a read then is not stored). */
    OptionalLong writeGeneration(String server) {
        return call(Op.READ, "read a server's writes", () -> OptionalLong.of(store.writeGenerations().current(server)),
                OptionalLong.empty());
    }

    /** @return whether the store counted it */
    boolean advanceWriteGeneration(String server) {
        return call(Op.WRITE, "count a write", () -> {
            store.writeGenerations().advance(server);
            return true;
        }, false);
    }

    private List<String> putPlain(CacheEntry entry) {
        store.put(entry);
        return List.of();
    }

    /**
     * Adds to the store's counters; counts it refuses are kept here and added later.
     *
     * @return whether the store took them
     */
    boolean count(String tool, Map<Counter, Long> deltas) {
        return count(tool, null, deltas);
    }

    /** As {@link #count(String, Map)}, also for {@code agent} unless it is null. */
    boolean count(String tool, String agent, Map<Counter, Long> deltas) {
        telemetry.counted(tool, deltas);
        boolean counted = call(Op.COUNT, "count", () -> {
            store.counters().increment(tool, agent, deltas);
            return true;
        }, false);
        if (counted) {
            outage.writeUnwritten(store);
        } else {
            outage.keepUnwritten(new Counted(tool, agent), deltas);
        }
        return counted;
    }

    /** Whose counters a count goes to, besides the totals: a tool's, an agent's, both or neither. */
    private record Counted(String tool, String agent) {
    }

    boolean remove(String key) {
        return call(Op.WRITE, "remove an entry", () -> store.remove(key), false);
    }

    int removeByTool(String tool) {
        return call(Op.WRITE, "remove entries of a tool", () -> store.removeByTool(tool), 0);
    }

    int removeByTool(String tool, String version) {
        return call(Op.WRITE, "remove entries of a tool", () -> store.removeByTool(tool, version), 0);
    }

    int removeByPattern(Glob keys) {
        return call(Op.WRITE, "clear entries", () -> store.removeByPattern(keys), 0);
    }

    List<CacheEntry> entries() {
        return call(Op.READ, "list entries", store::entries, List.of());
    }

    int size() {
        return call(Op.READ, "count entries", store::size, 0);
    }

    long estimatedBytes() {
        return call(Op.READ, "estimate size", store::estimatedBytes, 0L);
    }

    Optional<Map<String, String>> lastSeenVersions(String scope) {
        return call(Op.READ, "read tool versions", () -> Optional.of(store.lastSeenVersions(scope)), Optional.empty());
    }

    /** @return whether the versions were recorded */
    boolean recordVersions(String scope, Map<String, String> versions) {
        return call(Op.WRITE, "record tool versions", () -> {
            store.recordVersions(scope, versions);
            return true;
        }, false);
    }

    /** The fleet-wide flight of {@code key}, or {@link FlightLease#LOCAL} if the store cannot give one. */
    FlightLease acquireFlight(String key, Duration maxHold) {
        return call(Op.FLIGHT, "take the flight", () -> {
            try {
                return store.acquireFlight(key, maxHold);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return FlightLease.LOCAL;
            }
        }, FlightLease.LOCAL);
    }

    /** Whether an outage of the store (down, or refusing writes) is going on. */
    boolean isDown() {
        return outage.state != State.UP;
    }

    /**
     * The store's counters plus what it has not taken yet: counts it refused and the operations
     * that failed; only those if it cannot be read.
     */
    Map<Counter, Long> counters() {
        Map<Counter, Long> counters = call(Op.READ, "read counters", () -> store.counters().totals(), new EnumMap<>(Counter.class));
        Map<Counter, Long> merged = new EnumMap<>(Counter.class);
        for (Counter counter : Counter.values()) {
            merged.put(counter, counters.getOrDefault(counter, 0L));
        }
        outage.unwritten().forEach((counter, delta) -> merged.merge(counter, delta, Long::sum));
        merged.merge(Counter.STORE_ERRORS, outage.failedOperations.get(), Long::sum);
        return merged;
    }

    Optional<Instant> countingSince() {
        return call(Op.READ, "read counters", () -> store.counters().countingSince(), Optional.empty());
    }

    Map<String, Map<Counter, Long>> toolCounters() {
        Map<String, Map<Counter, Long>> byTool = new TreeMap<>();
        call(Op.READ, "read counters", () -> store.counters().perTool(), Map.<String, Map<Counter, Long>>of())
                .forEach((tool, counted) -> byTool.put(tool, new EnumMap<>(counted)));
        outage.unwrittenBy(Counted::tool).forEach((tool, deltas) -> {
            Map<Counter, Long> counted = byTool.computeIfAbsent(tool, ignored -> zeros());
            deltas.forEach((counter, delta) -> counted.merge(counter, delta, Long::sum));
        });
        return byTool;
    }

    /** The counters of each agent, with the counts the store has not taken yet. */
    Map<String, Map<Counter, Long>> agentCounters() {
        Map<String, Map<Counter, Long>> byAgent = new TreeMap<>();
        call(Op.READ, "read counters", () -> store.counters().perAgent(), Map.<String, Map<Counter, Long>>of())
                .forEach((agent, counted) -> byAgent.put(agent, new EnumMap<>(counted)));
        outage.unwrittenBy(Counted::agent).forEach((agent, deltas) -> {
            Map<Counter, Long> counted = byAgent.computeIfAbsent(agent, ignored -> zeros());
            deltas.forEach((counter, delta) -> counted.merge(counter, delta, Long::sum));
        });
        return byAgent;
    }

    private static Map<Counter, Long> zeros() {
        return StoreCounters.noCounts();
    }

    private <T> T call(Op op, String what, Supplier<T> action, T fallback) {
        T value;
        try {
            value = action.get();
        } catch (RuntimeException e) {
            failed(op, what, e);
            return fallback;
        }
        if (outage.state != State.UP) {
            outage.succeeded(op, store);
        }
        return value;
    }

    private void failed(Op op, String what, RuntimeException e) {
        outage.failedOperations.incrementAndGet();
        Set<Outage> failedIn = CALL.get();
        if (failedIn != null) {
            failedIn.add(outage);
        }
        outage.failed(op, what, e);
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

    /** What a failure says about the store, from the kind of exception in its causes. */
    private static String downBecause(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            if (cause instanceof TimeoutException) {
                return "did not answer in time";
            }
            if (cause instanceof ConnectException || cause instanceof NoRouteToHostException
                    || cause instanceof UnknownHostException) {
                return "cannot be reached";
            }
        }
        return null;
    }

    /** One store's outage, shared by every face's view of its guard. */
    private static final class Outage {
        volatile State state = State.UP;
        /** Store operations that failed and are not in the store's own counter yet. */
        final AtomicLong failedOperations = new AtomicLong();
        /** Calls of the policy that met a failure in this outage. */
        final AtomicLong failedCalls = new AtomicLong();
        /** Counts the store refused, by whose counters they also go to. */
        private final Map<Counted, Map<Counter, Long>> unwritten = new HashMap<>();
        /** The agents among {@link #unwritten}: at most {@link StoreCounters#MAX_AGENTS}, the rest as other. */
        private final Set<String> unwrittenAgents = new HashSet<>();
        /** Whether {@link #unwritten} holds anything: read without the lock on every count. */
        private volatile boolean anyUnwritten;

        void callFailed() {
            failedCalls.incrementAndGet();
        }

        synchronized void failed(Op op, String what, RuntimeException e) {
            if (state == State.DOWN) {
                return;
            }
            String down = downBecause(e);
            if (down == null && op != Op.READ) {
                if (state == State.UP) {
                    state = State.READ_ONLY;
                    failedCalls.set(0);
                    LOG.log(Level.WARNING, "cache store refuses writes (" + StoreGuard.reason(e) + "); it still serves"
                            + " what it holds, but stores nothing new until it takes writes again");
                }
                return;
            }
            if (state == State.UP) {
                failedCalls.set(0);
            }
            state = State.DOWN;
            LOG.log(Level.WARNING, "cache store " + (down == null ? "failed to " + what : down) + " ("
                    + StoreGuard.reason(e) + "); running uncached until it answers again");
        }

        /**
         * A store that was down answers again; one that refused writes takes them again only when
         * it stores something (a store may keep counts in memory, so a count proves nothing).
         */
        void succeeded(Op op, CacheStore store) {
            State was;
            long calls;
            synchronized (this) {
                was = state;
                if (was == State.UP || (was == State.READ_ONLY && op != Op.WRITE)) {
                    return;
                }
                state = State.UP;
                calls = failedCalls.getAndSet(0);
            }
            long operations = failedOperations.getAndSet(0);
            LOG.log(Level.INFO, "cache store " + (was == State.DOWN ? "answers again" : "takes writes again") + " after "
                    + calls + (calls == 1 ? " call" : " calls") + (was == State.DOWN ? " ran uncached" : " stored or counted nothing")
                    + " (" + operations + " store " + (operations == 1 ? "operation" : "operations") + " failed); caching resumed");
            try {
                store.counters().increment(Counter.STORE_ERRORS, operations);
            } catch (RuntimeException e) {
                failedOperations.addAndGet(operations);
            }
            writeUnwritten(store);
        }

        synchronized void keepUnwritten(Counted counted, Map<Counter, Long> deltas) {
            anyUnwritten = true;
            // an outage must not let a client that invents names grow memory either
            Counted kept = counted.agent() == null ? counted
                    : new Counted(counted.tool(), StoreCounters.countedAs(unwrittenAgents, counted.agent()));
            if (kept.agent() != null) {
                unwrittenAgents.add(kept.agent());
            }
            deltas.forEach((counter, delta) -> unwritten.computeIfAbsent(kept,
                    ignored -> new EnumMap<>(Counter.class)).merge(counter, delta, Long::sum));
        }

        /** Writes the counts the store refused, now that it took others. */
        void writeUnwritten(CacheStore store) {
            if (!anyUnwritten) {
                return;
            }
            Map<Counted, Map<Counter, Long>> pending;
            synchronized (this) {
                pending = new HashMap<>(unwritten);
                unwritten.clear();
                unwrittenAgents.clear();
                anyUnwritten = false;
            }
            pending.forEach((counted, deltas) -> {
                try {
                    store.counters().increment(counted.tool(), counted.agent(), deltas);
                } catch (RuntimeException e) {
                    keepUnwritten(counted, deltas);
                }
            });
        }

        /** The counts not written yet, in total. */
        synchronized Map<Counter, Long> unwritten() {
            Map<Counter, Long> total = new EnumMap<>(Counter.class);
            unwritten.values().forEach(deltas -> deltas.forEach((counter, delta) -> total.merge(counter, delta, Long::sum)));
            return total;
        }

        /** The counts not written yet, by tool or by agent ({@code whose}), leaving out those of none. */
        synchronized Map<String, Map<Counter, Long>> unwrittenBy(Function<Counted, String> whose) {
            Map<String, Map<Counter, Long>> by = new TreeMap<>();
            unwritten.forEach((counted, deltas) -> {
                String name = whose.apply(counted);
                if (name != null) {
                    Map<Counter, Long> sum = by.computeIfAbsent(name, ignored -> new EnumMap<>(Counter.class));
                    deltas.forEach((counter, delta) -> sum.merge(counter, delta, Long::sum));
                }
            });
            return by;
        }
    }
}
