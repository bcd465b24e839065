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
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
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
    /** The group the copies kept for revalidation form in the store: their own bound and LRU. */
    private static final String KEPT_GROUP = "execache:revalidation";
    /** A kept copy's key: the run's key with this after the format version, so no lookup of a run ever meets it. */
    private static final String KEPT_PREFIX = CacheKeys.PREFIX + "kept:";
    /** How long a run is kept for revalidation after it was stored, by default. */
    public static final Duration DEFAULT_KEEP_FOR_REVALIDATION = Duration.ofHours(24);
    /** The bytes the copies kept for revalidation take at most, by default. */
    public static final long DEFAULT_REVALIDATION_BYTES = 64L * 1024 * 1024;
    /**
     * Asks a revalidation's independent calls at once (daemon threads, made as needed and dropped
     * when idle): they are few and mostly wait on their servers.
     */
    private static final ExecutorService ASK_AT_ONCE = Executors.newCachedThreadPool(task -> {
        Thread thread = new Thread(task, "execache-revalidation");
        thread.setDaemon(true);
        return thread;
    });

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
    private volatile KeptForRevalidation kept;

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
        this.kept = new KeptForRevalidation(Math.max(1, policy.maxEntries() / 2), DEFAULT_REVALIDATION_BYTES,
                DEFAULT_KEEP_FOR_REVALIDATION);
        toolVersions.addListener(this::toolChanged);
    }

    /**
     * How runs are kept for revalidation once their freshness lapses: at most {@code maxEntries}
     * of them (their own least recently used go first) taking at most {@code maxBytes} (a run whose
     * entry is larger than its share, {@code maxBytes / maxEntries}, is not kept), each for
     * {@code keepFor} after it was stored. A kept run is never answered as it is: its tool calls are
     * asked again first. {@code maxEntries} 0 keeps none (a stale run then always runs again).
     * By default half the policy's entries, {@link #DEFAULT_REVALIDATION_BYTES} and {@link #DEFAULT_KEEP_FOR_REVALIDATION}.
     */
    public CachedExecutor keepForRevalidation(int maxEntries, long maxBytes, Duration keepFor) {
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
        this.kept = new KeptForRevalidation(maxEntries, maxBytes, keepFor);
        return this;
    }

    private record KeptForRevalidation(int maxEntries, long maxBytes, Duration keepFor) {
        boolean on() {
            return maxEntries > 0;
        }

        long maxEntryBytes() {
            return maxBytes / maxEntries;
        }
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

    /** The key under which the run of {@code key} is kept for revalidation. */
    static String keptKey(String key) {
        return KEPT_PREFIX + key.substring(CacheKeys.PREFIX.length());
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
        if (ran.trace() != null && outcome.expiresAt() != null
                && (outcome.status() == CacheStatus.MISS || outcome.status() == CacheStatus.REVALIDATED)) {
            keepForRevalidation(key.get(), ran, outcome.storedAt());
        }
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

    /**
     * Keeps a copy of a run just stored, with its trace, for revalidation after its freshness
     * lapses: under a key of its own in its own group, depending on no tool (a tool's new version
     * or a write to its server removes the run, not this copy, so the next request revalidates).
     */
    private void keepForRevalidation(String key, Ran ran, Instant storedAt) {
        KeptForRevalidation keeping = kept;
        if (!keeping.on()) {
            return;
        }
        Map<String, String> reserved = new TreeMap<>();
        reserved.put(CacheEntry.TRACE, ran.trace());
        if (ran.keptOut().toolAnswerBytes() > 0) {
            reserved.put(CacheEntry.TOOL_ANSWER_BYTES, Long.toString(ran.keptOut().toolAnswerBytes()));
        }
        ExecutionResult result = ran.result();
        CacheEntry copy = new CacheEntry(keptKey(key), result.value(), result.console(), result.executionTime(),
                reserved, storedAt, storedAt.plus(keeping.keepFor()), 0, ran.label());
        if (copy.estimatedBytes() <= keeping.maxEntryBytes()) {
            store.put(copy, new GroupBound(KEPT_GROUP, keeping.maxEntries()));
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
            Counter notStoredCounter, Map<String, String> dependsOn, Instant answersExpireAt, KeptOut keptOut,
            String trace, String label) {
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
        /** The run's calls as its trace keeps them, in the order the code made them. */
        private final List<RunTrace.Step> steps = new ArrayList<>();
        /** Whether a call could not be kept in the trace (the run is then kept without one). */
        private boolean untraced;
        /** Answers fetched just now by a revalidation that found one changed, by call: the code's calls take them. */
        private final Map<String, Deque<CodeToolCall>> prefetched = new HashMap<>();
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
            return make(server, tool, argumentsJson, -1);
        }

        @Override
        public CodeToolCall callAfter(String server, String tool, String argumentsJson, int answersSeen) {
            return make(server, tool, argumentsJson, Math.max(0, answersSeen));
        }

        /** Hands the code's calls these answers, each once, instead of asking again. */
        synchronized void prefetch(Map<String, Deque<CodeToolCall>> answers) {
            answers.forEach((call, queue) -> prefetched.put(call, new ArrayDeque<>(queue)));
        }

        private synchronized CodeToolCall takePrefetched(String call) {
            Deque<CodeToolCall> answers = prefetched.get(call);
            return answers == null ? null : answers.poll();
        }

        /** @param answersSeen see {@link CodeTools#callAfter}; -1 when not known (every earlier call counts as read) */
        private CodeToolCall make(String server, String tool, String argumentsJson, int answersSeen) {
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
            CodeToolCall call = takePrefetched(callName(server, tool, argumentsJson));
            try (Telemetry.Span span = store.telemetry().start("execute_tool " + server + "__" + tool,
                    Telemetry.Kind.INTERNAL, traceParent)) {
                span.set("gen_ai.operation.name", "execute_tool").set("gen_ai.tool.name", server + "__" + tool);
                if (call == null) {
                    call = tools.call(server, tool, argumentsJson, agent, freshness);
                }
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
                if (call.cacheable() && !call.answer().isError()
                        && RunTrace.writable(server, tool, call.version(), argumentsJson)) {
                    int seen = answersSeen < 0 ? steps.size() : Math.min(answersSeen, steps.size());
                    steps.add(new RunTrace.Step(seen, server, tool, call.version(), RunTrace.digestOf(call.answer()),
                            argumentsJson));
                } else {
                    untraced = true;
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

        /** The run's trace as an entry keeps it; null when it has none (no calls, or one that could not be kept). */
        synchronized String trace() {
            if (untraced || steps.isEmpty()) {
                return null;
            }
            return new RunTrace(steps).write().orElse(null);
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
        /** Answers a revalidation fetched before it found one changed: the run takes them instead of asking again. */
        private volatile Map<String, Deque<CodeToolCall>> fetched = Map.of();
        /** Whether this execution revalidated a stale run and found an answer changed. */
        private volatile boolean changed;

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
            if (changed) {
                counts.put(Counter.REVALIDATIONS_CHANGED, 1L);
            }
        }

        @Override
        public Duration ranFor(Ran ran) {
            return ran.result().executionTime();
        }

        /**
         * Asks the calls of the run kept for this key again, round by round (each round's calls at
         * once), through the tools as a run would; if every answer is the one the run read, its
         * result stands (nondeterministic runs are never stored, so never kept). When one differs,
         * the answers fetched so far are handed to the run, which asks none of them again.
         */
        @Override
        public Optional<Ran> revalidate() {
            if (!kept.on()) {
                return Optional.empty();
            }
            Optional<CacheEntry> copy = store.get(keptKey(key));
            if (copy.isEmpty()) {
                return Optional.empty();
            }
            if (!copy.get().isIntact()) {
                store.remove(copy.get().key());
                store.count(null, Map.of(Counter.DAMAGED, 1L));
                return Optional.empty();
            }
            Optional<RunTrace> trace = RunTrace.of(copy.get());
            if (trace.isEmpty() || !copy.get().nondeterminism().isEmpty()) {
                return Optional.empty();
            }
            RunTools runTools = new RunTools(tools, request.limits(), request.agent(), request.freshness());
            List<RunTrace.Step> renewed = new ArrayList<>();
            Map<String, Deque<CodeToolCall>> answers = new HashMap<>();
            boolean same = true;
            for (List<RunTrace.Step> round : trace.get().rounds()) {
                List<CodeToolCall> fresh = askAtOnce(runTools, round);
                for (int i = 0; i < round.size(); i++) {
                    RunTrace.Step step = round.get(i);
                    CodeToolCall call = fresh.get(i);
                    answers.computeIfAbsent(callName(step.server(), step.tool(), step.arguments()),
                            name -> new ArrayDeque<>()).add(call);
                    String digest = RunTrace.digestOf(call.answer());
                    if (!call.cacheable() || call.answer().isError() || !digest.equals(step.answerDigest())
                            || call.version() == null) {
                        same = false;
                    } else {
                        renewed.add(new RunTrace.Step(step.seen(), step.server(), step.tool(), call.version(), digest,
                                step.arguments()));
                    }
                }
                if (!same) {
                    break;
                }
            }
            runTools.end();
            if (!same) {
                fetched = answers;
                changed = true;
                LOG.log(Level.INFO, "revalidation of " + key + ": a tool answered otherwise, running the code");
                return Optional.empty();
            }
            ranWith = runTools;
            CacheEntry stored = copy.get();
            ExecutionResult result = ExecutionResult.success(stored.value(), stored.console(), stored.executionTime());
            KeptOut keptOut = stored.toolAnswerBytes() == 0 ? KeptOut.NONE
                    : new KeptOut(stored.toolAnswerBytes(), resultBytes(result), Map.of());
            Map<String, String> dependsOn = new TreeMap<>(versions);
            dependsOn.putAll(runTools.called());
            String text = new RunTrace(renewed).write().orElse(null);
            return Optional.of(new Ran(result, runTools.calls(), runTools.notStoredBecause(),
                    runTools.notStoredCounter(), dependsOn, runTools.answersExpireAt(), keptOut, text, stored.label()));
        }
        @Override public Duration maxHold() { return request.limits().timeout().plus(FLIGHT_MARGIN); }
        @Override public GroupBound bound() { return null; }

        @Override
        public Ran run() {
            RunTools runTools = new RunTools(tools, request.limits(), request.agent(), request.freshness());
            runTools.prefetch(fetched);
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
            String trace = result.nondeterminism().isEmpty() ? runTools.trace() : null;
            return new Ran(result, runTools.calls(), notStored, notStoredCounter, dependsOn, answersExpireAt,
                    runTools.keptOut(result), trace, request.labelOrFirstLine());
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
            if (ran.keptOut().toolAnswerBytes() > 0 || ran.trace() != null) {
                dependencies = new TreeMap<>(dependencies);
            }
            if (ran.keptOut().toolAnswerBytes() > 0) {
                dependencies.put(CacheEntry.TOOL_ANSWER_BYTES, Long.toString(ran.keptOut().toolAnswerBytes()));
            }
            if (ran.trace() != null) {
                dependencies.put(CacheEntry.TRACE, ran.trace());
            }
            return Optional.of(new CacheEntry(key, result.value(), result.console(), result.executionTime(),
                    dependencies, now, expiresAt, 0, ran.label()));
        }

        @Override
        public Ran fromEntry(CacheEntry entry) {
            ExecutionResult result = ExecutionResult.success(entry.value(), entry.console(), entry.executionTime())
                    .withNondeterminism(entry.nondeterminism());
            KeptOut keptOut = entry.toolAnswerBytes() == 0 ? KeptOut.NONE
                    : new KeptOut(entry.toolAnswerBytes(), resultBytes(result), Map.of());
            return new Ran(result, List.of(), null, null, entry.dependsOnTools(), null, keptOut, null, entry.label());
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

    /** One call as a revalidation and the run after it name it: the same server, tool and arguments are the same call. */
    private static String callName(String server, String tool, String argumentsJson) {
        return server + "\n" + tool + "\n" + argumentsJson;
    }

    /**
     * Asks one round of a trace's calls at once: the first on this thread, the others on
     * {@link #ASK_AT_ONCE}. Cancelled as a whole when this thread is interrupted.
     */
    private static List<CodeToolCall> askAtOnce(RunTools runTools, List<RunTrace.Step> round) {
        List<Future<CodeToolCall>> others = new ArrayList<>();
        for (RunTrace.Step step : round.subList(1, round.size())) {
            others.add(ASK_AT_ONCE.submit(() -> runTools.callAfter(step.server(), step.tool(), step.arguments(),
                    step.seen())));
        }
        List<CodeToolCall> answers = new ArrayList<>();
        try {
            RunTrace.Step first = round.get(0);
            answers.add(runTools.callAfter(first.server(), first.tool(), first.arguments(), first.seen()));
            for (Future<CodeToolCall> other : others) {
                answers.add(other.get());
            }
        } catch (InterruptedException e) {
            others.forEach(other -> other.cancel(true));
            Thread.currentThread().interrupt();
            throw new CancellationException("cancelled while revalidating a run");
        } catch (ExecutionException e) {
            others.forEach(other -> other.cancel(true));
            if (e.getCause() instanceof RuntimeException cause) {
                throw cause;
            }
            if (e.getCause() instanceof Error cause) {
                throw cause;
            }
            throw new IllegalStateException(e.getCause());
        } catch (RuntimeException | Error e) {
            others.forEach(other -> other.cancel(true));
            throw e;
        }
        return answers;
    }
}
