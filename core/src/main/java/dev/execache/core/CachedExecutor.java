package dev.execache.core;

import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.CacheStore;
import dev.execache.core.spi.CodeToolCall;
import dev.execache.core.spi.CodeTools;
import dev.execache.core.spi.Counter;
import dev.execache.core.spi.GroupBound;
import dev.execache.core.spi.Sandbox;
import dev.execache.core.spi.Telemetry;
import dev.execache.core.spi.ToolCallCancelledException;
import dev.execache.core.spi.ToolVersionSource;
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
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CancellationException;
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
    private final Ticker ticker;
    private final String versionScope;
    private final AtomicBoolean versionsSynchronized = new AtomicBoolean();
    private volatile CodeTools codeTools = CodeTools.NONE;
    private volatile ServersInKey serversInKey = new ServersInKey(Map.of(), "");

    public CachedExecutor(Sandbox sandbox, CacheStore store, ToolVersionSource toolVersions, CachePolicy policy, Clock clock) {
        this(sandbox, store, toolVersions, policy, clock, Ticker.SYSTEM);
    }

    /** @param ticker measures the latency a hit saves (the clock gives times of day: creation, expiry) */
    public CachedExecutor(Sandbox sandbox, CacheStore store, ToolVersionSource toolVersions, CachePolicy policy,
            Clock clock, Ticker ticker) {
        this(sandbox, store, toolVersions, policy, clock, ticker, CacheStore.DEFAULT_SCOPE);
    }

    /**
     * @param versionScope whose last-seen tool versions {@link #synchronizeToolVersions} compares
     *     against (see {@link CacheStore#lastSeenVersions(String)}): one per project, so that
     *     projects sharing a store with different versions of a tool never invalidate each other
     */
    public CachedExecutor(Sandbox sandbox, CacheStore store, ToolVersionSource toolVersions, CachePolicy policy,
            Clock clock, Ticker ticker, String versionScope) {
        this.sandbox = Objects.requireNonNull(sandbox, "sandbox must not be null");
        this.store = new StoreGuard(Objects.requireNonNull(store, "store must not be null"));
        this.toolVersions = Objects.requireNonNull(toolVersions, "toolVersions must not be null");
        this.policy = Objects.requireNonNull(policy, "policy must not be null");
        this.clock = Objects.requireNonNull(clock, "clock must not be null");
        this.ticker = Objects.requireNonNull(ticker, "ticker must not be null");
        this.versionScope = Objects.requireNonNull(versionScope, "versionScope must not be null");
        this.loop = new PolicyLoop(this.store, clock, ticker);
        toolVersions.addListener(this::toolChanged);
    }

    /**
     * Runs the request through the cache.
     *
     * @throws IllegalArgumentException if the request declares a tool the version source does not know
     * @throws dev.execache.core.spi.SandboxUnavailableException if the sandbox cannot run anything
     */
    public ExecutionOutcome execute(ExecutionRequest request) {
        return store.oneCall(() -> executeOnce(request));
    }

    private ExecutionOutcome executeOnce(ExecutionRequest request) {
        CodeTools tools = codeTools;
        Map<String, String> versions = versionsFor(request, tools);
        if (!policy.enabled()) {
            return bypass(request, tools, Counter.BYPASSED);
        }
        if (!versionsSynchronized.get()) {
            synchronizeToolVersions();
        }
        Optional<String> key = cacheKey(request, versions, tools);
        if (key.isEmpty()) {
            LOG.log(Level.INFO, "not cached: " + ReadFingerprint.NOT_WATCHABLE);
            return bypass(request, tools, Counter.UNCACHEABLE_READS_UNWATCHABLE);
        }
        Execution execution = new Execution(request, key.get(), versions, tools);
        PolicyLoop.Outcome<Ran> outcome = loop.serve(execution);
        Ran ran = outcome.result();
        String notStoredBecause = ran.notStoredBecause() != null ? ran.notStoredBecause() : execution.staleBecause();
        return new ExecutionOutcome(ran.result(), outcome.status(), key.get(), outcome.saved(), ran.calls(),
                notStoredBecause, ran.keptOut(), outcome.storedAt(), outcome.expiresAt());
    }

    /**
     * The tools code may call from now on ({@code tools.SERVER.TOOL(args)}): every call goes
     * through them, and a run depends on the tools it called, not on every tool they offer.
     */
    public void useCodeTools(CodeTools tools) {
        this.codeTools = Objects.requireNonNull(tools, "tools must not be null");
    }

    /**
     * Where the spans of a run (cache lookup, flight wait, the sandbox's run, the tool calls code
     * makes) and the cache's counts are reported from now on; {@link Telemetry#NONE} by default.
     */
    public void useTelemetry(Telemetry telemetry) {
        store.useTelemetry(Objects.requireNonNull(telemetry, "telemetry must not be null"));
    }

    /** The run of {@code request} in the sandbox, inside a span of its own. */
    private ExecutionResult runInSandbox(ExecutionRequest request, RunTools runTools) {
        try (Telemetry.Span span = store.telemetry().start("deno run")) {
            runTools.traceUnder(store.telemetry().current());
            ExecutionResult result = sandbox.execute(request, runTools);
            if (!result.isSuccess()) {
                span.failed(result.error().type().displayName(), result.error().message());
            }
            return result;
        }
    }

    /** Runs without looking up or storing; counts the run as {@code why} (the store is neither read nor written else). */
    private ExecutionOutcome bypass(ExecutionRequest request, CodeTools tools, Counter why) {
        RunTools runTools = new RunTools(tools, request.limits(), request.agent(), request.freshness());
        ExecutionResult result = null;
        KeptOut keptOut = KeptOut.NONE;
        try {
            result = runInSandbox(request, runTools);
        } finally {
            runTools.end();
            runTools.countAnswerBytes();
            Map<Counter, Long> counts = new EnumMap<>(Counter.class);
            counts.put(Counter.CALLS, 1L);
            counts.put(why, 1L);
            if (result != null) {
                keptOut = runTools.keptOut(result);
                addKeptOut(keptOut, counts);
            }
            store.count(null, request.agent(), counts);
        }
        return new ExecutionOutcome(result, CacheStatus.BYPASS, null, Duration.ZERO, runTools.calls(), null, keptOut);
    }

    private static void addKeptOut(KeptOut keptOut, Map<Counter, Long> counts) {
        if (keptOut.bytes() > 0) {
            counts.put(Counter.KEPT_OUT_BYTES, keptOut.bytes());
        }
    }

    /** The bytes a run returned to the agent: its result's JSON and its console output (UTF-8). */
    private static long resultBytes(ExecutionResult result) {
        return utf8Length(result.value() == null ? "" : result.value()) + utf8Length(result.console());
    }

    private static long utf8Length(String text) {
        long bytes = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < 0x80) {
                bytes++;
            } else if (c < 0x800) {
                bytes += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                bytes += 4;
                i++;
            } else {
                bytes += 3;
            }
        }
        return bytes;
    }

    /**
     * The cache key of a request, as {@link #execute} would use it.
     *
     * @throws IllegalArgumentException if the request is not cacheable (the files it may read cannot be watched)
     */
    public String keyFor(ExecutionRequest request) {
        CodeTools tools = codeTools;
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

    public CachePolicy policy() {
        return policy;
    }

    /** The clock ages and expiries are read from. */
    public Clock clock() {
        return clock;
    }

    /**
     * The versions in the key: those of the tools the request declares, or else of every known
     * tool but those code can call (a run depends on those it called, recorded as it runs).
     */
    private Map<String, String> versionsFor(ExecutionRequest request, CodeTools tools) {
        Map<String, String> known = toolVersions.versions();
        if (request.tools().isEmpty()) {
            Map<String, String> all = new TreeMap<>(known);
            all.keySet().removeAll(tools.names());
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
     * What one run gave: its result, the tool calls it made, why it may not be stored, and when
     * the earliest of the cached tool answers it used expires (null for none).
     */
    private record Ran(ExecutionResult result, List<ToolCallRecord> calls, String notStoredBecause,
            Counter notStoredCounter, Map<String, String> dependsOn, Instant answersExpireAt, KeptOut keptOut) {
    }

    /**
     * The tools of one run: every call goes to the {@link CodeTools} under the run's limits, and
     * is recorded, with the version of the tool it reached and whether its answer may be reused.
     */
    private final class RunTools implements CodeTools {
        private final CodeTools tools;
        private final Limits limits;
        private final String agent;
        private final Freshness freshness;
        private final List<ToolCallRecord> calls = new ArrayList<>();
        /** Bytes of the answers the code got, by tool: only of calls that reached a tool. */
        private final Map<String, Long> answerBytes = new TreeMap<>();
        private final Map<String, String> called = new TreeMap<>();
        /** The write generation of each server the run's answers read, as noted before the first call to it. */
        private final Map<String, Long> writesSeen = new TreeMap<>();
        /** Whether two calls to one server noted different generations: a write came between them. */
        private boolean writtenBetweenCalls;
        private Instant answersExpireAt;
        private int count;
        private long bytes;
        private String notStoredBecause;
        private Counter notStoredCounter;
        /** The call being made ({@code SERVER__TOOL}) and since when; null between calls. */
        private String inFlight;
        private long inFlightSince;
        private boolean ended;
        /** The run's span, parent of its calls' spans: calls arrive on another thread than the run's. */
        private volatile Map<String, String> traceParent = Map.of();

        RunTools(CodeTools tools, Limits limits, String agent, Freshness freshness) {
            this.tools = tools;
            this.limits = limits;
            this.agent = agent;
            this.freshness = freshness;
        }

        void traceUnder(Map<String, String> parent) {
            this.traceParent = parent;
        }

        @Override
        public Map<String, List<String>> reachable() {
            return tools.reachable();
        }

        @Override
        public Set<String> names() {
            return tools.names();
        }

        @Override
        public Map<String, String> identities() {
            return tools.identities();
        }

        @Override
        public CodeToolCall call(String server, String tool, String argumentsJson) {
            synchronized (this) {
                if (count >= limits.maxToolCalls()) {
                    String problem = "the run made more tool calls than its limit of " + limits.maxToolCalls();
                    notStored(Counter.UNCACHEABLE_TOO_MANY_TOOL_CALLS, problem);
                    return CodeToolCall.refused(server, tool, problem);
                }
                count++;
            }
            long start = ticker.read();
            synchronized (this) {
                if (ended) {
                    throw new ToolCallCancelledException("the run has ended", false);
                }
                inFlight = server + "__" + tool;
                inFlightSince = start;
            }
            CodeToolCall call;
            try (Telemetry.Span span = store.telemetry().start("execute_tool " + server + "__" + tool,
                    Telemetry.Kind.INTERNAL, traceParent)) {
                span.set("gen_ai.operation.name", "execute_tool").set("gen_ai.tool.name", server + "__" + tool);
                call = tools.call(server, tool, argumentsJson, agent, freshness);
                if (call.answer().isError()) {
                    span.failed("tool_error", null);
                }
            } catch (CancellationException e) {
                boolean reached = !(e instanceof ToolCallCancelledException cancelled) || cancelled.reachedTool();
                synchronized (this) {
                    cancelled(reached ? ToolCallRecord.Cancelled.POSSIBLY_APPLIED : ToolCallRecord.Cancelled.NOT_APPLIED);
                }
                throw e;
            }
            Duration took = Duration.ofNanos(ticker.read() - start);
            synchronized (this) {
                inFlight = null;
                if (ended) {
                    // the run's outcome was taken without this call, which it reports as cancelled
                    return call;
                }
                calls.add(new ToolCallRecord(call.tool(), call.status(), took, call.answer().isError()));
                if (call.version() != null) {
                    called.put(call.tool(), call.version());
                }
                call.writesSeen().forEach((read, generation) -> {
                    Long earlier = writesSeen.putIfAbsent(read, generation);
                    if (earlier != null && !earlier.equals(generation)) {
                        writtenBetweenCalls = true;
                    }
                });
                if (call.expiresAt() != null && (answersExpireAt == null || call.expiresAt().isBefore(answersExpireAt))) {
                    answersExpireAt = call.expiresAt();
                }
                if (!call.cacheable()) {
                    if (call.answer().isError()) {
                        notStored(Counter.UNCACHEABLE_TOOL_FAILED, "the call of " + call.tool() + " failed");
                    } else {
                        String because = call.outcome().notCachedBecause();
                        notStored(Counter.UNCACHEABLE_MUTATING_TOOL, call.tool() + " is not cached ("
                                + (because == null ? "it may change something" : because) + "), so neither is the run");
                    }
                }
                bytes += call.bytes();
                if (call.version() != null) {
                    answerBytes.merge(call.tool(), call.bytes(), Long::sum);
                }
                if (bytes > limits.maxToolBytes()) {
                    String problem = "the run's tool calls returned more than its limit of " + limits.maxToolBytes()
                            + " bytes";
                    notStored(Counter.UNCACHEABLE_TOOL_RESULTS_TOO_LARGE, problem);
                    return CodeToolCall.refused(server, tool, problem);
                }
            }
            return call;
        }

        /** The call in flight was cut off by the end of its run. */
        private void cancelled(ToolCallRecord.Cancelled what) {
            if (inFlight == null) {
                return;
            }
            if (!ended) {
                calls.add(new ToolCallRecord(inFlight, CacheStatus.BYPASS, Duration.ofNanos(ticker.read() - inFlightSince),
                        true, what));
                notStored(Counter.UNCACHEABLE_TOOL_FAILED, "the call of " + inFlight
                        + " was cancelled: the run ended before it was answered");
            }
            inFlight = null;
        }

        /**
         * The run is over: a call still in flight was cut off, and is reported as cancelled with
         * its effect unknown (it has not said yet whether it reached its tool); later calls are refused.
         */
        synchronized void end() {
            cancelled(ToolCallRecord.Cancelled.POSSIBLY_APPLIED);
            ended = true;
        }

        private void notStored(Counter counter, String reason) {
            if (notStoredBecause == null) {
                notStoredBecause = reason;
                notStoredCounter = counter;
            }
        }

        /**
         * Counts, for each tool the run called, the bytes of its answers the code consumed: one
         * count per tool, after the run, rather than one per call.
         */
        void countAnswerBytes() {
            Map<String, Long> byTool;
            synchronized (this) {
                byTool = new TreeMap<>(answerBytes);
            }
            byTool.forEach((tool, answered) -> store.count(tool, agent, Map.of(Counter.TOOL_ANSWER_BYTES, answered)));
        }

        /** What the run kept out of the agent's context: nothing unless it succeeded and consumed tool answers. */
        synchronized KeptOut keptOut(ExecutionResult result) {
            long consumed = answerBytes.values().stream().mapToLong(Long::longValue).sum();
            if (!result.isSuccess() || consumed == 0) {
                return KeptOut.NONE;
            }
            return new KeptOut(consumed, resultBytes(result), answerBytes);
        }

        synchronized Counter notStoredCounter() {
            return notStoredCounter;
        }

        synchronized List<ToolCallRecord> calls() {
            return List.copyOf(calls);
        }

        synchronized Map<String, String> called() {
            return Map.copyOf(called);
        }

        synchronized String notStoredBecause() {
            return notStoredBecause;
        }

        synchronized Instant answersExpireAt() {
            return answersExpireAt;
        }

        /** The write generations the run's answers were read at; empty if a server was written to between its calls. */
        synchronized Optional<Map<String, Long>> writesSeen() {
            return writtenBetweenCalls ? Optional.empty() : Optional.of(Map.copyOf(writesSeen));
        }
    }

    /** A code execution as the policy loop sees it. */
    private final class Execution implements PolicyLoop.Call<Ran> {
        private final ExecutionRequest request;
        private final String key;
        private final Map<String, String> versions;
        private final CodeTools tools;
        private volatile RunTools ranWith;
        private volatile String staleBecause;

        Execution(ExecutionRequest request, String key, Map<String, String> versions, CodeTools tools) {
            this.request = request;
            this.key = key;
            this.versions = versions;
            this.tools = tools;
        }

        /** Why the run was not kept though it could have been: an answer it used went stale; null otherwise. */
        String staleBecause() {
            return staleBecause;
        }

        @Override
        public Optional<Map<String, Long>> writesSeen() {
            RunTools run = ranWith;
            return run == null ? Optional.of(Map.of()) : run.writesSeen();
        }

        @Override
        public void stale() {
            staleBecause = "a call that may change a server the run read started or ended while it ran";
            LOG.log(Level.INFO, "not stored: " + staleBecause);
        }

        @Override public String key() { return key; }
        @Override public String tool() { return null; }
        @Override public String agent() { return request.agent(); }
        @Override public Freshness freshness() { return request.freshness(); }

        @Override
        public void addCounts(Ran ran, Map<Counter, Long> counts) {
            addKeptOut(ran.keptOut(), counts);
        }
        @Override public Duration maxHold() { return request.limits().timeout().plus(FLIGHT_MARGIN); }
        @Override public GroupBound bound() { return null; }

        @Override
        public Ran run() {
            RunTools runTools = new RunTools(tools, request.limits(), request.agent(), request.freshness());
            ranWith = runTools;
            ExecutionResult result;
            try {
                result = runInSandbox(request, runTools);
            } finally {
                runTools.end();
                runTools.countAnswerBytes();
            }
            String notStored = runTools.notStoredBecause();
            Counter notStoredCounter = runTools.notStoredCounter();
            Instant answersExpireAt = runTools.answersExpireAt();
            if (notStored == null && answersExpireAt != null && !answersExpireAt.isAfter(clock.instant())) {
                notStored = "a tool answer it used expired before the run ended";
                notStoredCounter = Counter.UNCACHEABLE_STALE_TOOL_ANSWER;
            }
            if (notStored == null && result.isSuccess() && !result.nondeterminism().isEmpty()
                    && !policy.cacheNondeterministic()) {
                notStored = "the code used " + String.join(", ", result.nondeterminism())
                        + " and cache_nondeterministic is false";
                notStoredCounter = Counter.UNCACHEABLE_NONDETERMINISTIC;
            }
            Map<String, String> dependsOn = new TreeMap<>(versions);
            dependsOn.putAll(runTools.called());
            return new Ran(result, runTools.calls(), notStored, notStoredCounter, dependsOn, answersExpireAt,
                    runTools.keptOut(result));
        }

        /** The sandbox's own execution time is what a hit saves, not the time spent around it. */
        @Override
        public Optional<CacheEntry> entryFor(Ran ran, Duration took) {
            ExecutionResult result = ran.result();
            if (!result.isSuccess() || ran.notStoredBecause() != null) {
                if (ran.notStoredBecause() != null) {
                    LOG.log(Level.INFO, "not stored: " + ran.notStoredBecause());
                }
                return Optional.empty();
            }
            Instant now = clock.instant();
            Instant expiresAt = now.plus(policy.ttl());
            if (ran.answersExpireAt() != null && ran.answersExpireAt().isBefore(expiresAt)) {
                expiresAt = ran.answersExpireAt();
            }
            if (!expiresAt.isAfter(now)) {
                return Optional.empty();
            }
            Map<String, String> dependencies = CacheEntry.dependencies(ran.dependsOn(), result.nondeterminism());
            if (ran.keptOut().toolAnswerBytes() > 0) {
                dependencies = new TreeMap<>(dependencies);
                dependencies.put(CacheEntry.TOOL_ANSWER_BYTES, Long.toString(ran.keptOut().toolAnswerBytes()));
            }
            return Optional.of(new CacheEntry(key, result.value(), result.console(), result.executionTime(),
                    dependencies, now, expiresAt, 0, request.labelOrFirstLine()));
        }

        @Override
        public Ran fromEntry(CacheEntry entry) {
            ExecutionResult result = ExecutionResult.success(entry.value(), entry.console(), entry.executionTime())
                    .withNondeterminism(entry.nondeterminism());
            KeptOut keptOut = entry.toolAnswerBytes() == 0 ? KeptOut.NONE
                    : new KeptOut(entry.toolAnswerBytes(), resultBytes(result), Map.of());
            return new Ran(result, List.of(), null, null, entry.dependsOnTools(), null, keptOut);
        }

        /** A failed run is counted as failed whatever else kept it from being stored. */
        @Override
        public Counter whyNotStored(Ran ran) {
            if (!ran.result().isSuccess()) {
                return Counter.FAILED;
            }
            // a success with no reason of its own: the answers it used expired as it ended
            return ran.notStoredCounter() == null ? Counter.UNCACHEABLE_STALE_TOOL_ANSWER : ran.notStoredCounter();
        }

        /** An entry whose tools have a new version here, before their removal reached the store, is stale. */
        @Override
        public boolean accepts(CacheEntry entry) {
            Map<String, String> current = toolVersions.versions();
            for (Map.Entry<String, String> tool : entry.dependsOnTools().entrySet()) {
                if (!tool.getValue().equals(current.get(tool.getKey()))) {
                    return false;
                }
            }
            return true;
        }
    }
}
