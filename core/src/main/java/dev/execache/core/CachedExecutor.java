package dev.execache.core;

import java.lang.System.Logger.Level;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Runs code through the cache: a hit returns the stored result without running anything; a
 * miss runs the code in the {@link Sandbox} and stores it if it succeeded. Identical
 * requests that arrive together run once. A failing store never fails a run.
 */
public final class CachedExecutor {
    private static final System.Logger LOG = System.getLogger("dev.execache.core");
    /** How much longer than the run's timeout a fleet-wide flight may be held. */
    private static final Duration FLIGHT_MARGIN = Duration.ofSeconds(5);

    private final Sandbox sandbox;
    private final StoreGuard store;
    private final ToolVersionSource toolVersions;
    private final CachePolicy policy;
    private final Clock clock;
    private final ConcurrentHashMap<String, CompletableFuture<ExecutionOutcome>> inFlight = new ConcurrentHashMap<>();
    private final AtomicBoolean versionsSynchronized = new AtomicBoolean();

    public CachedExecutor(Sandbox sandbox, CacheStore store, ToolVersionSource toolVersions, CachePolicy policy, Clock clock) {
        this.sandbox = Objects.requireNonNull(sandbox, "sandbox must not be null");
        this.store = new StoreGuard(Objects.requireNonNull(store, "store must not be null"));
        this.toolVersions = Objects.requireNonNull(toolVersions, "toolVersions must not be null");
        this.policy = Objects.requireNonNull(policy, "policy must not be null");
        this.clock = Objects.requireNonNull(clock, "clock must not be null");
        toolVersions.addListener(this::toolChanged);
    }

    /**
     * Runs the request through the cache.
     *
     * @throws IllegalArgumentException if the request declares a tool the version source does not know
     * @throws SandboxUnavailableException if the sandbox cannot run anything
     */
    public ExecutionOutcome execute(ExecutionRequest request) {
        Map<String, String> versions = versionsFor(request);
        if (!policy.enabled()) {
            return new ExecutionOutcome(sandbox.execute(request), CacheStatus.BYPASS, null, Duration.ZERO);
        }
        if (!versionsSynchronized.get()) {
            synchronizeToolVersions();
        }
        Optional<String> key = cacheKey(request, versions);
        if (key.isEmpty()) {
            LOG.log(Level.INFO, "not cached: " + ReadFingerprint.NOT_WATCHABLE);
            return new ExecutionOutcome(sandbox.execute(request), CacheStatus.BYPASS, null, Duration.ZERO);
        }
        return executeOnce(request, key.get(), versions);
    }

    private ExecutionOutcome executeOnce(ExecutionRequest request, String key, Map<String, String> versions) {
        CompletableFuture<ExecutionOutcome> mine = new CompletableFuture<>();
        CompletableFuture<ExecutionOutcome> running = inFlight.putIfAbsent(key, mine);
        if (running != null) {
            return awaitShared(running, request, key, versions);
        }
        try {
            ExecutionOutcome outcome = lookUpOrRun(request, key, versions);
            mine.complete(outcome);
            return outcome;
        } catch (RuntimeException | Error e) {
            mine.completeExceptionally(e);
            throw e;
        } finally {
            inFlight.remove(key, mine);
        }
    }

    /**
     * The cache key of a request, as {@link #execute} would use it.
     *
     * @throws IllegalArgumentException if the request is not cacheable (the files it may read cannot be watched)
     */
    public String keyFor(ExecutionRequest request) {
        return cacheKey(request, versionsFor(request)).orElseThrow(() -> new IllegalArgumentException(
                "not cacheable: " + ReadFingerprint.NOT_WATCHABLE));
    }

    /** Every live entry, without counting hits; empty when the store is unusable. */
    public List<CacheEntry> entries() {
        return store.call("list entries", () -> store.store().entries(), List.of());
    }

    /** The stored entry under {@code key}, without counting a hit. */
    public Optional<CacheEntry> inspect(String key) {
        return store.call("read an entry", () -> store.store().peek(key), Optional.empty());
    }

    /**
     * Compares the current tool versions with those the store saw last and removes every
     * entry of each tool that changed. A one-shot process calls this (execute does, once)
     * to notice changes made since the last run.
     */
    public List<Invalidation> synchronizeToolVersions() {
        Map<String, String> current = toolVersions.versions();
        Optional<Map<String, String>> lastSeen = store.call("read tool versions",
                () -> Optional.of(store.store().lastSeenVersions()), Optional.empty());
        if (lastSeen.isEmpty()) {
            return List.of();
        }
        List<Invalidation> invalidations = new ArrayList<>();
        for (Map.Entry<String, String> tool : new TreeMap<>(current).entrySet()) {
            String previous = lastSeen.get().get(tool.getKey());
            if (previous != null && !previous.equals(tool.getValue())) {
                invalidations.add(invalidate(tool.getKey(), previous, tool.getValue()));
            }
        }
        if (store.run("record tool versions", () -> store.store().recordVersions(current))) {
            versionsSynchronized.set(true);
        }
        return invalidations;
    }

    /** Removes every entry that depended on {@code tool}; returns how many. */
    public int invalidateTool(String tool) {
        int removed = removeEntriesOf(tool);
        LOG.log(Level.INFO, "tool " + tool + " invalidated on request: removed " + removed
                + (removed == 1 ? " entry" : " entries"));
        return removed;
    }

    /** Removes every entry whose key matches the glob; returns how many. */
    public int clear(String keyGlob) {
        Glob.of(keyGlob);
        return store.call("clear entries", () -> store.store().removeByPattern(keyGlob), 0);
    }

    public CacheStats stats() {
        Map<Counter, Long> counters = store.counters();
        int entries = store.call("count entries", () -> store.store().size(), 0);
        long bytes = store.call("estimate size", () -> store.store().estimatedBytes(), 0L);
        return CacheStats.from(counters, entries, bytes);
    }

    public CachePolicy policy() {
        return policy;
    }

    private ExecutionOutcome lookUpOrRun(ExecutionRequest request, String key, Map<String, String> versions) {
        long lookupStart = System.nanoTime();
        Optional<CacheEntry> hit = store.call("read an entry", () -> store.store().get(key), Optional.empty());
        if (hit.isPresent()) {
            return hitOutcome(hit.get(), key, lookupStart);
        }
        boolean storeWasDown = store.isDown();
        Duration maxHold = request.limits().timeout().plus(FLIGHT_MARGIN);
        FlightLease lease = store.call("take the flight", () -> acquireFlight(key, maxHold), FlightLease.LOCAL);
        try {
            if (lease != FlightLease.LOCAL) {
                long recheckStart = System.nanoTime();
                Optional<CacheEntry> computedElsewhere = store.call("read an entry", () -> store.store().get(key), Optional.empty());
                if (computedElsewhere.isPresent()) {
                    return hitOutcome(computedElsewhere.get(), key, recheckStart);
                }
            }
            ExecutionResult result = sandbox.execute(request);
            boolean stored = result.isSuccess() && store(key, result, versions, request.labelOrFirstLine());
            boolean counted = store.run("count a miss", () -> store.store().increment(Counter.MISSES, 1));
            CacheStatus status = (storeWasDown || !counted || (result.isSuccess() && !stored))
                    ? CacheStatus.STORE_ERROR : CacheStatus.MISS;
            return new ExecutionOutcome(result, status, key, Duration.ZERO);
        } finally {
            lease.close();
        }
    }

    private FlightLease acquireFlight(String key, Duration maxHold) {
        try {
            return store.store().acquireFlight(key, maxHold);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return FlightLease.LOCAL;
        }
    }

    private ExecutionOutcome hitOutcome(CacheEntry entry, String key, long lookupStartNanos) {
        Duration lookup = Duration.ofNanos(System.nanoTime() - lookupStartNanos);
        Duration saved = entry.executionTime().minus(lookup);
        if (saved.isNegative()) {
            saved = Duration.ZERO;
        }
        Map<Counter, Long> counted = new EnumMap<>(Counter.class);
        counted.put(Counter.HITS, 1L);
        counted.put(Counter.SAVED_NANOS, saved.toNanos());
        store.run("count a hit", () -> store.store().increment(counted));
        ExecutionResult result = ExecutionResult.success(entry.value(), entry.console(), entry.executionTime());
        return new ExecutionOutcome(result, CacheStatus.HIT, key, saved);
    }

    private boolean store(String key, ExecutionResult result, Map<String, String> versions, String label) {
        Instant now = clock.instant();
        CacheEntry entry = new CacheEntry(key, result.value(), result.console(), result.executionTime(),
                versions, now, now.plus(policy.ttl()), 0, label);
        return store.run("store a result", () -> store.store().put(entry));
    }

    /**
     * The result of the identical run in flight. Every call answered this way is counted: a hit
     * handed on is a hit, a run's result handed on is {@link Counter#SHARED}. When that run was
     * cancelled (its caller went away) this call runs the request itself.
     */
    private ExecutionOutcome awaitShared(CompletableFuture<ExecutionOutcome> running, ExecutionRequest request,
            String key, Map<String, String> versions) {
        long waitStart = System.nanoTime();
        ExecutionOutcome leader;
        try {
            leader = running.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CancellationException("cancelled while waiting for an identical run");
        } catch (CancellationException e) {
            return executeOnce(request, key, versions);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof CancellationException) {
                return executeOnce(request, key, versions);
            }
            if (e.getCause() instanceof RuntimeException cause) {
                throw cause;
            }
            throw new CompletionException(e.getCause());
        }
        if (leader.status() == CacheStatus.HIT) {
            Duration waited = Duration.ofNanos(System.nanoTime() - waitStart);
            Duration saved = leader.result().executionTime().minus(waited);
            if (saved.isNegative()) {
                saved = Duration.ZERO;
            }
            Map<Counter, Long> counted = new EnumMap<>(Counter.class);
            counted.put(Counter.HITS, 1L);
            counted.put(Counter.SAVED_NANOS, saved.toNanos());
            store.run("count a hit", () -> store.store().increment(counted));
            return new ExecutionOutcome(leader.result(), CacheStatus.HIT, leader.key(), saved);
        }
        store.run("count a shared result", () -> store.store().increment(Counter.SHARED, 1));
        return new ExecutionOutcome(leader.result(), CacheStatus.SHARED, leader.key(), Duration.ZERO);
    }

    private Map<String, String> versionsFor(ExecutionRequest request) {
        Map<String, String> known = toolVersions.versions();
        if (request.tools().isEmpty()) {
            return new TreeMap<>(known);
        }
        Map<String, String> used = new TreeMap<>();
        for (String tool : request.tools()) {
            String version = known.get(tool);
            if (version == null) {
                throw new IllegalArgumentException("unknown tool '" + tool + "': give its version (known tools: "
                        + (known.isEmpty() ? "none" : String.join(", ", new TreeSet<>(known.keySet()))) + ")");
            }
            used.put(tool, version);
        }
        return used;
    }

    private static Optional<String> cacheKey(ExecutionRequest request, Map<String, String> versions) {
        List<String> allowRead = request.limits().allowRead();
        if (allowRead.isEmpty()) {
            return Optional.of(CacheKeys.forExecution(request.code(), request.contextJson(), versions));
        }
        return ReadFingerprint.of(allowRead, request.limits().workingDirectory())
                .map(reads -> CacheKeys.forExecution(request.code(), request.contextJson(), versions, reads));
    }

    private void toolChanged(String tool, String newVersion) {
        String previous = store.call("read tool versions", () -> store.store().lastSeenVersions().get(tool), null);
        invalidate(tool, previous, newVersion);
        store.run("record tool versions", () -> store.store().recordVersions(Map.of(tool, newVersion)));
    }

    private Invalidation invalidate(String tool, String oldVersion, String newVersion) {
        int removed = removeEntriesOf(tool);
        Invalidation invalidation = new Invalidation(tool, oldVersion, newVersion, removed);
        LOG.log(Level.INFO, invalidation.toString());
        return invalidation;
    }

    private int removeEntriesOf(String tool) {
        int removed = store.call("remove entries of a tool", () -> store.store().removeByTool(tool), 0);
        if (removed > 0) {
            store.run("count invalidations", () -> store.store().increment(Counter.INVALIDATIONS, removed));
        }
        return removed;
    }
}
