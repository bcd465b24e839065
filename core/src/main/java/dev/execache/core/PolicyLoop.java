package dev.execache.core;

import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.Counter;
import dev.execache.core.spi.FlightLease;
import dev.execache.core.spi.GroupBound;
import dev.execache.core.spi.Telemetry;
import dev.execache.core.spi.ToolCallCancelledException;
import java.lang.System.Logger.Level;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;

/**
 * The one caching policy both faces use ({@link CachedExecutor} for code, {@link CachedTool}
 * for tool calls): look up; on a miss take the single flight (in this process, and across the
 * fleet when the store coordinates one); run; store only a success; count, in the store, in
 * total and per tool.
 */
final class PolicyLoop {
    private static final System.Logger LOG = System.getLogger("dev.execache.core");
    private static final String KEPT_PREFIX = CacheKeys.PREFIX + "kept:";

    /** One call through the policy: what to run and how its result is stored and served. */
    interface Call<R> {
        String key();

        /** The tool whose own counters also count this call; null for code executions. */
        String tool();

        /** The agent whose counters also count this call; null for none. */
        default String agent() {
            return null;
        }

        /** How fresh an answer the caller accepts; a stored one that is older is asked again and replaced. */
        default Freshness freshness() {
            return Freshness.ANY;
        }

        /** Adds what else a served {@code result} counts (hit, shared or run) to {@code counts}. */
        default void addCounts(R result, Map<Counter, Long> counts) {
        }

        /** How long a fleet-wide flight may be held before it lapses. */
        Duration maxHold();

        /** The group bound the entry joins, or null for the store's bound alone. */
        GroupBound bound();

        R run();

        /**
         * When no stored answer was found: an answer made without running, by revalidating what was
         * kept of an earlier one after its freshness lapsed (its inputs asked again and found
         * unchanged); empty when there is none or it no longer holds, and {@link #run} runs. Asked
         * inside the flight, so a fleet revalidates once.
         */
        default Optional<R> revalidate() {
            return Optional.empty();
        }

        /** How long the run that first made {@code result} took: what a revalidation of it saves, less its own time. */
        default Duration ranFor(R result) {
            return Duration.ZERO;
        }

        /**
         * The entry to store for {@code result}, or empty if it is not a success.
         *
         * @param took how long {@link #run} took by the loop's ticker
         */
        Optional<CacheEntry> entryFor(R result, Duration took);

        R fromEntry(CacheEntry entry);

        /**
         * Why {@code result} was not stored ({@link #entryFor} gave none): {@link Counter#FAILED}
         * or an {@code UNCACHEABLE_} counter.
         */
        Counter whyNotStored(R result);

        /**
         * Whether a stored entry may still be served: false when something it depended on has
         * changed since and its removal has not reached this store yet. It is then removed.
         */
        default boolean accepts(CacheEntry entry) {
            return true;
        }

        /**
         * The write generation of each server the result read, as noted before it asked them
         * (see {@code WriteGenerations} in the SPI): the result is stored only if none
         * has moved, checked by the store atomically with the put. Empty when not known (the
         * store could not say, or a run noted two of one server because a write came between
         * its calls): the result is then not stored.
         */
        default Optional<Map<String, Long>> writesSeen() {
            return Optional.of(Map.of());
        }

        /** Told when the result is not stored because a server it read was written to meanwhile. */
        default void stale() {
        }

        /**
         * Whether {@code result} may be handed to an identical call that waited for it: not one that depended on
         * who asked (an agent's answer to its server), which the waiting caller gets only by asking itself.
         */
        default boolean sharable(R result) {
            return true;
        }
    }

    /**
     * @param evicted keys evicted from the call's group to make room for its entry
     * @param expiresAt when the entry the result came from, or was stored as, expires; null when it is not stored
     * @param storedAt when the answer was made (the entry's creation for a hit; now for a run)
     * @param notStored why a result that ran was not stored ({@link Counter#FAILED} or an {@code UNCACHEABLE_}
     *     counter), null when it was stored or came from the store
     * @param refreshed whether the caller's freshness turned down a stored answer, so it ran
     */
    record Outcome<R>(R result, CacheStatus status, Duration saved, List<String> evicted, Instant expiresAt,
            Instant storedAt, Counter notStored, boolean refreshed) {
    }

    private final StoreGuard store;
    private final Clock clock;
    private final Ticker ticker;
    private final ConcurrentHashMap<String, CompletableFuture<Outcome<?>>> inFlight = new ConcurrentHashMap<>();

    PolicyLoop(StoreGuard store, Clock clock, Ticker ticker) {
        this.store = store;
        this.clock = clock;
        this.ticker = ticker;
    }

    StoreGuard store() {
        return store;
    }

    Clock clock() {
        return clock;
    }

    Ticker ticker() {
        return ticker;
    }

    /**
     * The key under which a copy of the entry under {@code key} is kept for revalidation after its
     * freshness lapses: {@code kept:} after the format version, so no lookup of an answer ever meets it.
     */
    static String keptKey(String key) {
        return KEPT_PREFIX + key.substring(CacheKeys.PREFIX.length());
    }

    /** Runs the call through the cache; an exception of {@link Call#run} reaches every caller waiting on it. */
    @SuppressWarnings("unchecked")
    <R> Outcome<R> serve(Call<R> call) {
        CompletableFuture<Outcome<?>> mine = new CompletableFuture<>();
        CompletableFuture<Outcome<?>> running = inFlight.putIfAbsent(call.key(), mine);
        if (running != null) {
            return awaitShared((CompletableFuture<Outcome<R>>) (CompletableFuture<?>) running, call);
        }
        // the flight leaves the map before its waiters wake: one that must run itself (the leader was
        // cancelled) then starts a flight of its own instead of meeting the finished one again
        try {
            Outcome<R> outcome = lookUpOrRun(call);
            inFlight.remove(call.key(), mine);
            mine.complete(outcome);
            return outcome;
        } catch (RuntimeException | Error e) {
            inFlight.remove(call.key(), mine);
            mine.completeExceptionally(e);
            throw e;
        }
    }

    /**
     * Removes the entries made with {@code oldVersion} of {@code tool}, or with any version of it
     * when that is null (on request: counted as by hand). Entries made with another version stay:
     * another project on the same store may use it. Counts and logs it.
     */
    Invalidation invalidate(String tool, String oldVersion, String newVersion) {
        int removed = oldVersion == null ? store.removeByTool(tool) : store.removeByTool(tool, oldVersion);
        countRemoved(tool, removed, oldVersion == null ? RemovalCause.HAND : RemovalCause.VERSION);
        Invalidation invalidation = new Invalidation(tool, oldVersion, newVersion, removed);
        LOG.log(Level.INFO, invalidation.toString());
        return invalidation;
    }

    /** Counts {@code removed} entries as invalidations of {@code cause}, for {@code tool} too unless it is null. */
    void countRemoved(String tool, long removed, RemovalCause cause) {
        if (removed > 0 && cause.isInvalidation()) {
            store.count(tool, Map.of(Counter.INVALIDATIONS, removed, cause.counter(), removed));
        }
    }

    /**
     * Removes every entry whose key matches {@code keyGlob} and, when some of them were tools'
     * answers, the runs of code that used those answers (made with the same version of the tool):
     * a run is never kept longer than an answer it used. Returns how many, counted as {@code cause}.
     */
    int clear(String keyGlob, RemovalCause cause) {
        int removed = clearUncounted(keyGlob);
        countRemoved(null, removed, cause);
        return removed;
    }

    private int clearUncounted(String keyGlob) {
        Glob glob = Glob.of(keyGlob);
        Map<String, Set<String>> answered = new HashMap<>();
        if (!glob.toString().equals("*")) {
            for (CacheEntry entry : store.entries()) {
                if (CacheKeys.isToolCall(entry) && glob.matches(entry.key())) {
                    entry.dependsOnTools().forEach((tool, version) ->
                            answered.computeIfAbsent(tool, name -> new HashSet<>()).add(version));
                }
            }
        }
        int removed = store.removeByPattern(glob);
        if (answered.isEmpty()) {
            return removed;
        }
        for (CacheEntry entry : store.entries()) {
            if (!CacheKeys.isToolCall(entry) && usedAny(entry, answered) && store.remove(entry.key())) {
                removed++;
            }
        }
        return removed;
    }

    private static boolean usedAny(CacheEntry run, Map<String, Set<String>> answers) {
        return run.dependsOnTools().entrySet().stream().anyMatch(tool ->
                answers.getOrDefault(tool.getKey(), Set.of()).contains(tool.getValue()));
    }

    /** The live, intact entry under {@code key}; a damaged one is removed, counted and logged, never served. */
    private Optional<CacheEntry> intact(String key, String tool) {
        Optional<CacheEntry> found = store.get(key);
        if (found.isEmpty() || found.get().isIntact()) {
            return found;
        }
        store.remove(key);
        store.count(tool, Map.of(Counter.DAMAGED, 1L));
        LOG.log(Level.WARNING, "cache entry " + key + " was damaged in the store (its value fails its checksum);"
                + " removed it and running instead");
        return Optional.empty();
    }

    private <R> Outcome<R> lookUpOrRun(Call<R> call) {
        long lookupStart = ticker.read();
        Optional<CacheEntry> found;
        Optional<CacheEntry> hit;
        try (Telemetry.Span span = store.telemetry().start("cache lookup")) {
            span.set("execache.tool", call.tool());
            found = current(call, intact(call.key(), call.tool()));
            hit = found.filter(entry -> fresh(call, entry));
            span.set("execache.cache.result", hit.isPresent() ? "hit" : found.isPresent() ? "stale" : "miss");
        }
        if (hit.isPresent()) {
            return hit(call, hit.get(), lookupStart);
        }
        boolean refreshed = found.isPresent();
        try (FlightLease lease = store.acquireFlight(call.key(), call.maxHold())) {
            if (lease != FlightLease.LOCAL) {
                long recheckStart = ticker.read();
                Optional<CacheEntry> computedElsewhere = current(call, intact(call.key(), call.tool()))
                        .filter(entry -> fresh(call, entry));
                if (computedElsewhere.isPresent()) {
                    return hit(call, computedElsewhere.get(), recheckStart);
                }
            }
            long runStart = ticker.read();
            R result;
            boolean revalidated = false;
            try {
                Optional<R> verified = refreshed ? Optional.empty() : call.revalidate();
                revalidated = verified.isPresent();
                result = revalidated ? verified.get() : call.run();
            } catch (RuntimeException | Error e) {
                Map<Counter, Long> failed = new EnumMap<>(Counter.class);
                failed.put(Counter.CALLS, 1L);
                failed.put(Counter.MISSES, 1L);
                failed.put(Counter.FAILED, 1L);
                if (refreshed) {
                    failed.put(Counter.REFRESHED, 1L);
                }
                store.count(call.tool(), call.agent(), failed);
                throw e;
            }
            Duration took = Duration.ofNanos(ticker.read() - runStart);
            Optional<CacheEntry> entry = call.entryFor(result, took);
            Counter notStored = entry.isEmpty() ? call.whyNotStored(result) : null;
            Optional<Map<String, Long>> seen = entry.isPresent() ? call.writesSeen() : Optional.of(Map.of());
            Optional<List<String>> evicted = Optional.of(List.of());
            if (entry.isPresent() && seen.isPresent() && seen.get().isEmpty()) {
                evicted = store.put(entry.get(), call.bound());
            } else if (entry.isPresent()) {
                StoreGuard.Put put = seen.isPresent() ? store.putIfCurrent(entry.get(), call.bound(), seen.get())
                        : new StoreGuard.Put(Optional.of(List.of()), false);
                evicted = put.evicted();
                if (!put.current()) {
                    entry = Optional.empty();
                    notStored = Counter.UNCACHEABLE_STALE_TOOL_ANSWER;
                    call.stale();
                }
            }
            if (refreshed && entry.isEmpty()) {
                // the caller saw a newer answer than the stored one: no one else is served the older
                store.remove(call.key());
            }
            Map<Counter, Long> counts = new EnumMap<>(Counter.class);
            counts.put(Counter.CALLS, 1L);
            Duration saved = Duration.ZERO;
            if (revalidated) {
                saved = call.ranFor(result).minus(took);
                saved = saved.isNegative() ? Duration.ZERO : saved;
                counts.put(Counter.REVALIDATIONS, 1L);
                counts.put(Counter.REVALIDATION_SAVED_NANOS, saved.toNanos());
            } else {
                counts.put(Counter.MISSES, 1L);
            }
            if (notStored != null) {
                counts.put(notStored, 1L);
            }
            if (refreshed) {
                counts.put(Counter.REFRESHED, 1L);
            }
            call.addCounts(result, counts);
            boolean counted = store.count(call.tool(), call.agent(), counts);
            // judged after this call's own store operations: one that succeeded ends the outage of its kind
            CacheStatus status = store.isDown() || !counted || evicted.isEmpty() ? CacheStatus.STORE_ERROR
                    : revalidated ? CacheStatus.REVALIDATED : CacheStatus.MISS;
            Instant expiresAt = entry.isPresent() && evicted.isPresent() ? entry.get().expiresAt() : null;
            Instant storedAt = entry.isPresent() ? entry.get().createdAt() : clock.instant();
            return new Outcome<>(result, status, saved, evicted.orElse(List.of()), expiresAt, storedAt,
                    notStored, refreshed);
        }
    }

    /** Whether the caller accepts {@code entry} as fresh enough. */
    private boolean fresh(Call<?> call, CacheEntry entry) {
        Freshness freshness = call.freshness();
        return freshness == Freshness.ANY || freshness.accepts(entry.createdAt(), clock.instant());
    }

    private Optional<CacheEntry> current(Call<?> call, Optional<CacheEntry> entry) {
        if (entry.isPresent() && !call.accepts(entry.get())) {
            store.remove(entry.get().key());
            return Optional.empty();
        }
        return entry;
    }

    private <R> Outcome<R> hit(Call<R> call, CacheEntry entry, long lookupStart) {
        Duration saved = savedSince(entry.executionTime(), lookupStart);
        return countedHit(call, call.fromEntry(entry), saved, entry.expiresAt(), entry.createdAt());
    }

    /** What a hit saved: {@code making} the answer, less the time since {@code start}; never below zero. */
    private Duration savedSince(Duration making, long start) {
        Duration saved = making.minus(Duration.ofNanos(ticker.read() - start));
        return saved.isNegative() ? Duration.ZERO : saved;
    }

    /** Counts a hit, whether the store answered this call or the identical one it waited for. */
    private <R> Outcome<R> countedHit(Call<R> call, R result, Duration saved, Instant expiresAt, Instant storedAt) {
        Map<Counter, Long> counted = new EnumMap<>(Counter.class);
        counted.put(Counter.CALLS, 1L);
        counted.put(Counter.HITS, 1L);
        counted.put(Counter.SAVED_NANOS, saved.toNanos());
        call.addCounts(result, counted);
        store.count(call.tool(), call.agent(), counted);
        return new Outcome<>(result, CacheStatus.HIT, saved, List.of(), expiresAt, storedAt, null, false);
    }

    /**
     * The result of the identical call in flight. Every call answered this way is counted: a hit
     * handed on is a hit, a run's result handed on is {@link Counter#SHARED}. When that call was
     * cancelled (its caller went away) this one runs itself.
     */
    private <R> Outcome<R> awaitShared(CompletableFuture<Outcome<R>> running, Call<R> call) {
        long waitStart = ticker.read();
        Outcome<R> leader;
        try (Telemetry.Span span = store.telemetry().start("flight wait")) {
            span.set("execache.tool", call.tool());
            leader = running.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            if (call.tool() != null) {
                // the identical call reached the tool; this one did not
                throw new ToolCallCancelledException("cancelled while waiting for an identical call of " + call.tool(),
                        false);
            }
            throw new CancellationException("cancelled while waiting for an identical run");
        } catch (CancellationException e) {
            inFlight.remove(call.key(), running);
            return serve(call);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof CancellationException) {
                inFlight.remove(call.key(), running);
                return serve(call);
            }
            if (e.getCause() instanceof RuntimeException cause) {
                throw cause;
            }
            if (e.getCause() instanceof Error cause) {
                throw cause;
            }
            throw new CompletionException(e.getCause());
        }
        if (leader.status() == CacheStatus.HIT && leader.storedAt() != null
                && !call.freshness().accepts(leader.storedAt(), clock.instant())) {
            // the identical call was answered from the store, by an answer older than this caller accepts
            return lookUpOrRun(call);
        }
        if (leader.status() == CacheStatus.HIT) {
            return countedHit(call, leader.result(), savedSince(leader.saved(), waitStart), leader.expiresAt(),
                    leader.storedAt());
        }
        if (!call.sharable(leader.result())) {
            // the identical call's answer was its own caller's: this one asks for itself (the finished flight has
            // left the map, so this starts or joins a newer one)
            return serve(call);
        }
        Map<Counter, Long> shared = new EnumMap<>(Counter.class);
        shared.put(Counter.CALLS, 1L);
        shared.put(Counter.SHARED, 1L);
        call.addCounts(leader.result(), shared);
        store.count(call.tool(), call.agent(), shared);
        return new Outcome<>(leader.result(), CacheStatus.SHARED, Duration.ZERO, List.of(), leader.expiresAt(),
                leader.storedAt(), leader.notStored(), false);
    }
}
