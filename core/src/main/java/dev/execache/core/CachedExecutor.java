package dev.execache.core;

import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.CacheStore;
import dev.execache.core.spi.CodeTools;
import dev.execache.core.spi.Counter;
import dev.execache.core.spi.Sandbox;
import dev.execache.core.spi.ToolVersionSource;
import java.lang.System.Logger.Level;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Runs code through the cache: a hit returns the stored result without running anything; a
 * miss runs the code in the {@link Sandbox} and stores it if it succeeded. Identical
 * requests that arrive together run once. A failing store never fails a run.
 */
public final class CachedExecutor {
    private static final System.Logger LOG = System.getLogger("dev.execache.core");
    /** How long a run is kept for revalidation after it was stored, by default. */
    public static final Duration DEFAULT_KEEP_FOR_REVALIDATION = Duration.ofHours(24);
    /** The bytes the copies kept for revalidation take at most, by default. */
    public static final long DEFAULT_REVALIDATION_BYTES = 64L * 1024 * 1024;

    private final PolicyLoop loop;
    private final StoreGuard store;
    private final ToolVersionSource toolVersions;
    private final CachePolicy cachePolicy;
    private final String versionScope;
    private final CodeTools codeTools;
    /** What every run of this executor is made with. */
    private final Execution.Setup setup;
    private final Policy policy = new Policy();
    private final AtomicBoolean versionsSynchronized = new AtomicBoolean();
    private volatile ServersInKey serversInKey = new ServersInKey(Map.of(), "");

    private CachedExecutor(Builder builder) {
        this.loop = builder.loop();
        this.store = loop.store();
        this.toolVersions = builder.toolVersions();
        this.cachePolicy = builder.cachePolicy;
        this.versionScope = builder.versionScope;
        this.codeTools = builder.codeTools;
        Execution.KeptForRevalidation kept = builder.kept != null ? builder.kept
                : new Execution.KeptForRevalidation(Math.max(1, cachePolicy.maxEntries() / 2), DEFAULT_REVALIDATION_BYTES,
                        DEFAULT_KEEP_FOR_REVALIDATION);
        this.setup = new Execution.Setup(builder.sandbox, loop, cachePolicy, toolVersions, kept);
        toolVersions.addListener(this::toolChanged);
    }

    /**
     * A builder of an executor that runs code in {@code sandbox} and keeps results in the store
     * {@code store} guards; give the same guard to every face on that store ({@link StoreGuard#of}).
     */
    public static Builder builder(Sandbox sandbox, StoreGuard store) {
        return new Builder(sandbox, store);
    }

    /** As {@link #builder(Sandbox, StoreGuard)}, with a guard of its own: for an executor alone on its store. */
    public static Builder builder(Sandbox sandbox, CacheStore store) {
        return new Builder(sandbox, StoreGuard.of(store));
    }

    /**
     * One tool call of a stored run's trace, as {@code inspect} shows it.
     *
     * @param tool the tool ({@code SERVER__TOOL})
     * @param version its version when it answered
     * @param argumentsDigest 128 bits of the SHA-256 of the arguments as the code sent them (hex)
     * @param answerDigest 128 bits of the SHA-256 of the answer the run read (hex)
     */
    public record TracedCall(String tool, String version, String argumentsDigest, String answerDigest) {
    }

    /**
     * The tool calls a stored run made, in order, with the digests of the answers it read (what a
     * revalidation asks again and compares); empty for an entry that keeps no trace.
     */
    public static List<TracedCall> traceOf(CacheEntry entry) {
        return RunTrace.of(entry).map(trace -> trace.steps().stream()
                .map(step -> new TracedCall(step.name(), step.version(), step.argumentsDigest(), step.answerDigest()))
                .toList()).orElse(List.of());
    }

    /**
     * Runs the request through the cache.
     *
     * @throws IllegalArgumentException if the request declares a tool the version source does not know
     * @throws dev.execache.core.spi.SandboxUnavailableException if the sandbox cannot run anything
     */
    public ExecutionOutcome execute(ExecutionRequest request) {
        return execute(request, CodeTools.Caller.NONE);
    }

    /**
     * As {@link #execute(ExecutionRequest)}, for a caller that hears what the servers of the run's tool calls send
     * while they answer (their progress, their requests to the agent). A hit, and a request that waits for an
     * identical one in flight, run nothing: the caller hears nothing.
     */
    public ExecutionOutcome execute(ExecutionRequest request, CodeTools.Caller caller) {
        Objects.requireNonNull(caller, "caller must not be null");
        return store.oneCall(() -> executeOnce(request, caller));
    }

    private ExecutionOutcome executeOnce(ExecutionRequest request, CodeTools.Caller caller) {
        CodeTools tools = codeTools;
        Map<String, String> versions = versionsFor(request, tools);
        if (!cachePolicy.enabled()) {
            return bypass(request, tools, caller, Counter.BYPASSED);
        }
        if (!versionsSynchronized.get()) {
            policy.synchronizeToolVersions();
        }
        Optional<String> key = cacheKey(request, versions, tools);
        if (key.isEmpty()) {
            LOG.log(Level.INFO, "not cached: " + ReadFingerprint.NOT_WATCHABLE);
            return bypass(request, tools, caller, Counter.UNCACHEABLE_READS_UNWATCHABLE);
        }
        Execution execution = new Execution(setup, request, key.get(), versions, tools, caller);
        PolicyLoop.Outcome<Execution.Ran> outcome = loop.serve(execution);
        Execution.Ran ran = outcome.result();
        boolean staleOnly = ran.notStoredCounter() == Counter.UNCACHEABLE_TOOL_ANSWER_NOT_STORED
                && execution.staleBecause() == null;
        if ((outcome.expiresAt() != null || staleOnly)
                && (outcome.status() == CacheStatus.MISS || outcome.status() == CacheStatus.REVALIDATED)) {
            // a run whose answers were not all stored is kept only this way: its next request asks them again
            execution.keepForRevalidation(ran, outcome.storedAt());
        }
        String notStoredBecause = ran.notStoredBecause() != null ? ran.notStoredBecause() : execution.staleBecause();
        return new ExecutionOutcome(ran.result(), outcome.status(), key.get(), outcome.saved(), ran.calls(),
                notStoredBecause, ran.keptOut(), outcome.storedAt(), outcome.expiresAt());
    }

    /** Runs without looking up or storing; counts the run as {@code why} (the store is neither read nor written else). */
    private ExecutionOutcome bypass(ExecutionRequest request, CodeTools tools, CodeTools.Caller caller, Counter why) {
        RunTools runTools = setup.runTools(request, tools, caller);
        ExecutionResult result = null;
        KeptOut keptOut = KeptOut.NONE;
        try {
            result = setup.runInSandbox(request, runTools);
        } finally {
            runTools.end();
            runTools.countAnswerBytes();
            Map<Counter, Long> counts = new EnumMap<>(Counter.class);
            counts.put(Counter.CALLS, 1L);
            counts.put(why, 1L);
            if (result != null) {
                keptOut = runTools.keptOut(result);
                keptOut.addTo(counts);
            }
            store.count(null, request.agent(), counts);
        }
        return new ExecutionOutcome(result, CacheStatus.BYPASS, null, Duration.ZERO, runTools.calls(), null, keptOut);
    }

    /**
     * What the executor is configured with and its rare operations, apart from running code (as
     * Caffeine's {@code Cache.policy()}): a decorator or a reader of the executor needs only
     * {@link CachedExecutor#execute} and this.
     */
    public Policy policy() {
        return policy;
    }

    /** See {@link CachedExecutor#policy()}. */
    public final class Policy {
        private Policy() {
        }

        /**
         * The cache key of a request, as {@link #execute} would use it.
         *
         * @throws IllegalArgumentException if the request is not cacheable (the files it may read cannot be watched)
         */
        public String keyFor(ExecutionRequest request) {
            CodeTools tools = CachedExecutor.this.codeTools;
            return cacheKey(request, versionsFor(request, tools), tools).orElseThrow(() -> new IllegalArgumentException(
                    "not cacheable: " + ReadFingerprint.NOT_WATCHABLE));
        }

        /** Every live entry, without counting hits; empty when the store is unusable. */
        public List<CacheEntry> entries() {
            return store.entries();
        }

        /** The stored entry under {@code key}, without counting a hit. */
        public Optional<CacheEntry> inspect(String key) {
            return store.peek(key);
        }

        /**
         * Compares the current tool versions with those this executor's scope saw last and, for each
         * tool that changed, removes the entries made with its old version. A one-shot process calls
         * this (execute does, once) to notice changes made since the last run.
         */
        public List<Invalidation> synchronizeToolVersions() {
            Map<String, String> current = toolVersions.versions();
            Optional<Map<String, String>> lastSeen = store.lastSeenVersions(versionScope);
            if (lastSeen.isEmpty()) {
                return List.of();
            }
            List<Invalidation> invalidations = new ArrayList<>();
            // only what changed is written: a command that found every version as it was writes nothing
            Map<String, String> changed = new TreeMap<>();
            for (Map.Entry<String, String> tool : new TreeMap<>(current).entrySet()) {
                String previous = lastSeen.get().get(tool.getKey());
                if (previous != null && !previous.equals(tool.getValue())) {
                    invalidations.add(loop.invalidate(tool.getKey(), previous, tool.getValue()));
                }
                if (!tool.getValue().equals(previous)) {
                    changed.put(tool.getKey(), tool.getValue());
                }
            }
            if (changed.isEmpty() || store.recordVersions(versionScope, changed)) {
                versionsSynchronized.set(true);
            }
            return invalidations;
        }

        /** Removes every entry that depended on {@code tool}, whatever its version; returns how many. */
        public int invalidateTool(String tool) {
            return loop.invalidate(tool, null, null).removed();
        }

        /**
         * Removes every entry whose key matches the glob, and the runs of code that used a tool's
         * answer among them; returns how many.
         */
        public int clear(String keyGlob) {
            return clear(keyGlob, RemovalCause.HAND);
        }

        /** As {@link #clear(String)}, the removals counted as invalidations of {@code cause}. */
        public int clear(String keyGlob, RemovalCause cause) {
            return loop.clear(keyGlob, Objects.requireNonNull(cause, "cause must not be null"));
        }

        public CacheStats stats() {
            return CacheStats.from(store.counters(), store.toolCounters(), store.agentCounters(), store.size(),
                    store.estimatedBytes(), store.countingSince().orElse(null));
        }

        /**
         * Whether the store is in an outage (unreachable, slow, or refusing writes): runs go on
         * uncached meanwhile, and {@link #stats()} gives what this process counted on top of what the
         * store could still be read for.
         */
        public boolean storeInOutage() {
            return store.isDown();
        }

        /** The rules runs are cached by: on or off, TTL, bound, whether nondeterministic runs are kept. */
        public CachePolicy cachePolicy() {
            return cachePolicy;
        }

        /** The clock ages and expiries are read from. */
        public Clock clock() {
            return loop.clock();
        }
    }

    /**
     * The versions in the key: those of the tools the request declares, or else of every known
     * tool but those code can call (a run depends on those it called, recorded as it runs).
     */
    private Map<String, String> versionsFor(ExecutionRequest request, CodeTools tools) {
        Map<String, String> known = toolVersions.versions();
        if (request.tools().isEmpty()) {
            Map<String, String> all = new TreeMap<>(known);
            Set<String> offered = tools.names();
            all.keySet().removeIf(name -> offered.contains(name) || tools.owns(name));
            return all;
        }
        Map<String, String> used = new TreeMap<>();
        for (String tool : request.tools()) {
            String version = known.get(tool);
            if (version == null) {
                throw new UnknownToolException(tool, known.keySet());
            }
            used.put(tool, version);
        }
        return used;
    }

    /** Keyed also on how the servers the code may call are reached: runs through other configurations never meet. */
    private Optional<String> cacheKey(ExecutionRequest request, Map<String, String> versions, CodeTools tools) {
        String servers = serversDigest(tools.identities());
        List<String> allowRead = request.limits().allowRead();
        if (allowRead.isEmpty()) {
            return Optional.of(CacheKeys.forExecution(request.code(), request.contextJson(), versions, servers));
        }
        return ReadFingerprint.of(allowRead, request.limits().workingDirectory())
                .map(reads -> CacheKeys.forExecution(request.code(), request.contextJson(), versions, servers, reads));
    }

    /** The servers' part of the key, digested again only when the tools give other identities. */
    private String serversDigest(Map<String, String> identities) {
        ServersInKey last = serversInKey;
        if (last.identities() == identities || last.identities().equals(identities)) {
            return last.digest();
        }
        ServersInKey now = new ServersInKey(identities, CacheKeys.serversDigest(identities));
        serversInKey = now;
        return now.digest();
    }

    private record ServersInKey(Map<String, String> identities, String digest) {
    }

    private void toolChanged(String tool, String oldVersion, String newVersion) {
        loop.invalidate(tool, oldVersion, newVersion);
        store.recordVersions(versionScope, Map.of(tool, newVersion));
    }

    /**
     * Builds a {@link CachedExecutor}; every setting is checked when it is set. What both faces are built
     * with (tool versions, clock, ticker, telemetry) is set as on {@link CachedTool.Builder}.
     */
    public static final class Builder extends FaceBuilder<Builder> {
        private final Sandbox sandbox;
        private CachePolicy cachePolicy = CachePolicy.DEFAULTS;
        private String versionScope = CacheStore.DEFAULT_SCOPE;
        private CodeTools codeTools = CodeTools.NONE;
        private Execution.KeptForRevalidation kept;

        private Builder(Sandbox sandbox, StoreGuard store) {
            super(store);
            this.sandbox = Objects.requireNonNull(sandbox, "sandbox must not be null");
        }

        @Override
        Builder self() {
            return this;
        }

        /** The rules runs are cached by (default {@link CachePolicy#DEFAULTS}). */
        public Builder cachePolicy(CachePolicy policy) {
            this.cachePolicy = Objects.requireNonNull(policy, "cachePolicy must not be null");
            return this;
        }

        /**
         * The tools code may call ({@code tools.SERVER.TOOL(args)}; default: none): every call goes through
         * them, and a run depends on the tools it called, not on every tool they offer.
         */
        public Builder codeTools(CodeTools tools) {
            this.codeTools = Objects.requireNonNull(tools, "codeTools must not be null");
            return this;
        }

        /**
         * Whose last-seen tool versions {@link Policy#synchronizeToolVersions} compares against (see
         * {@link CacheStore#lastSeenVersions(String)}): one per project, so that projects sharing a store
         * with different versions of a tool never invalidate each other (default {@link CacheStore#DEFAULT_SCOPE}).
         */
        public Builder versionScope(String scope) {
            this.versionScope = Objects.requireNonNull(scope, "versionScope must not be null");
            return this;
        }

        /**
         * How runs are kept for revalidation once their freshness lapses: at most {@code maxEntries}
         * of them (their own least recently used go first) taking at most {@code maxBytes} (a run whose
         * entry is larger than its share, {@code maxBytes / maxEntries}, is not kept), each for
         * {@code keepFor} after it was stored. A kept run is never answered as it is: its tool calls are
         * asked again first. {@code maxEntries} 0 keeps none (a stale run then always runs again).
         * By default half the policy's entries, {@link CachedExecutor#DEFAULT_REVALIDATION_BYTES} and
         * {@link CachedExecutor#DEFAULT_KEEP_FOR_REVALIDATION}.
         */
        public Builder keepForRevalidation(int maxEntries, long maxBytes, Duration keepFor) {
            if (maxEntries < 0) {
                throw new IllegalArgumentException("revalidation entries must not be negative: " + maxEntries);
            }
            if (maxEntries > 0 && maxBytes < maxEntries) {
                throw new IllegalArgumentException("revalidation bytes must be at least its entries (" + maxEntries
                        + "): " + maxBytes);
            }
            Objects.requireNonNull(keepFor, "keepFor must not be null");
            if (keepFor.isNegative() || keepFor.isZero()) {
                throw new IllegalArgumentException("keepFor must be positive: " + keepFor);
            }
            this.kept = new Execution.KeptForRevalidation(maxEntries, maxBytes, keepFor);
            return this;
        }

        public CachedExecutor build() {
            return new CachedExecutor(this);
        }
    }
}
