package dev.execache.core;

import java.lang.System.Logger.Level;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
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
    private final PolicyLoop loop;
    private final StoreGuard store;
    private final ToolVersionSource toolVersions;
    private final CachePolicy policy;
    private final Clock clock;
    private final AtomicBoolean versionsSynchronized = new AtomicBoolean();

    public CachedExecutor(Sandbox sandbox, CacheStore store, ToolVersionSource toolVersions, CachePolicy policy, Clock clock) {
        this(sandbox, store, toolVersions, policy, clock, Ticker.SYSTEM);
    }

    /** @param ticker measures the latency a hit saves (the clock gives times of day: creation, expiry) */
    public CachedExecutor(Sandbox sandbox, CacheStore store, ToolVersionSource toolVersions, CachePolicy policy,
            Clock clock, Ticker ticker) {
        this.sandbox = Objects.requireNonNull(sandbox, "sandbox must not be null");
        this.store = new StoreGuard(Objects.requireNonNull(store, "store must not be null"));
        this.toolVersions = Objects.requireNonNull(toolVersions, "toolVersions must not be null");
        this.policy = Objects.requireNonNull(policy, "policy must not be null");
        this.clock = Objects.requireNonNull(clock, "clock must not be null");
        this.loop = new PolicyLoop(this.store, clock, Objects.requireNonNull(ticker, "ticker must not be null"));
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
            LOG.log(Level.INFO, "not cached: the paths the code may read hold more than "
                    + ReadFingerprint.MAX_FILES + " files, too many to tell whether they changed");
            return new ExecutionOutcome(sandbox.execute(request), CacheStatus.BYPASS, null, Duration.ZERO);
        }
        PolicyLoop.Outcome<ExecutionResult> outcome = loop.serve(new Execution(request, key.get(), versions));
        return new ExecutionOutcome(outcome.result(), outcome.status(), key.get(), outcome.saved());
    }

    /**
     * The cache key of a request, as {@link #execute} would use it.
     *
     * @throws IllegalArgumentException if the request is not cacheable (it may read too many files)
     */
    public String keyFor(ExecutionRequest request) {
        return cacheKey(request, versionsFor(request)).orElseThrow(() -> new IllegalArgumentException(
                "not cacheable: the paths the code may read hold more than " + ReadFingerprint.MAX_FILES + " files"));
    }

    /** The stored entry under {@code key}, without counting a hit. */
    public Optional<CacheEntry> inspect(String key) {
        return store.peek(key);
    }

    /**
     * Compares the current tool versions with those the store saw last and removes every
     * entry of each tool that changed. A one-shot process calls this (execute does, once)
     * to notice changes made since the last run.
     */
    public List<Invalidation> synchronizeToolVersions() {
        Map<String, String> current = toolVersions.versions();
        Optional<Map<String, String>> lastSeen = store.lastSeenVersions();
        if (lastSeen.isEmpty()) {
            return List.of();
        }
        List<Invalidation> invalidations = new ArrayList<>();
        for (Map.Entry<String, String> tool : new TreeMap<>(current).entrySet()) {
            String previous = lastSeen.get().get(tool.getKey());
            if (previous != null && !previous.equals(tool.getValue())) {
                invalidations.add(loop.invalidate(tool.getKey(), previous, tool.getValue()));
            }
        }
        if (store.recordVersions(current)) {
            versionsSynchronized.set(true);
        }
        return invalidations;
    }

    /** Removes every entry that depended on {@code tool}; returns how many. */
    public int invalidateTool(String tool) {
        return loop.invalidate(tool, null, toolVersions.versions().getOrDefault(tool, "?")).removed();
    }

    /** Removes every entry whose key matches the glob; returns how many. */
    public int clear(String keyGlob) {
        Glob.of(keyGlob);
        return store.removeByPattern(keyGlob);
    }

    public CacheStats stats() {
        return CacheStats.from(store.counters(), store.toolCounters(), store.size(), store.estimatedBytes());
    }

    public CachePolicy policy() {
        return policy;
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
        return ReadFingerprint.of(allowRead)
                .map(reads -> CacheKeys.forExecution(request.code(), request.contextJson(), versions, reads));
    }

    private void toolChanged(String tool, String newVersion) {
        String previous = store.lastSeenVersions().map(seen -> seen.get(tool)).orElse(null);
        loop.invalidate(tool, previous, newVersion);
        store.recordVersions(Map.of(tool, newVersion));
    }

    /** A code execution as the policy loop sees it. */
    private final class Execution implements PolicyLoop.Call<ExecutionResult> {
        private final ExecutionRequest request;
        private final String key;
        private final Map<String, String> versions;

        Execution(ExecutionRequest request, String key, Map<String, String> versions) {
            this.request = request;
            this.key = key;
            this.versions = versions;
        }

        @Override public String key() { return key; }
        @Override public String tool() { return null; }
        @Override public Duration maxHold() { return request.limits().timeout().plus(FLIGHT_MARGIN); }
        @Override public GroupBound bound() { return null; }
        @Override public ExecutionResult run() { return sandbox.execute(request); }

        /** The sandbox's own execution time is what a hit saves, not the time spent around it. */
        @Override
        public Optional<CacheEntry> entryFor(ExecutionResult result, Duration took) {
            if (!result.isSuccess()) {
                return Optional.empty();
            }
            Instant now = clock.instant();
            return Optional.of(new CacheEntry(key, result.value(), result.console(), result.executionTime(),
                    versions, now, now.plus(policy.ttl()), 0));
        }

        @Override
        public ExecutionResult fromEntry(CacheEntry entry) {
            return ExecutionResult.success(entry.value(), entry.console(), entry.executionTime());
        }
    }
}
