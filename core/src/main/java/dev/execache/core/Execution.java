package dev.execache.core;

import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.CodeToolCall;
import dev.execache.core.spi.CodeTools;
import dev.execache.core.spi.Counter;
import dev.execache.core.spi.GroupBound;
import dev.execache.core.spi.Sandbox;
import dev.execache.core.spi.Telemetry;
import dev.execache.core.spi.ToolVersionSource;
import java.lang.System.Logger.Level;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/** A code execution as the policy loop sees it: one request, under its key, run by one executor. */
final class Execution implements PolicyLoop.Call<Execution.Ran> {
    private static final System.Logger LOG = System.getLogger("dev.execache.core");
    /** The group the copies kept for revalidation form in the store: their own bound and LRU. */
    private static final String KEPT_GROUP = "execache:revalidation";
    /** How much longer than the run's timeout a fleet-wide flight may be held. */
    private static final Duration FLIGHT_MARGIN = Duration.ofSeconds(5);
    /**
     * Asks a revalidation's independent calls at once (daemon threads, made as needed and dropped
     * when idle): they are few and mostly wait on their servers.
     */
    private static final ExecutorService ASK_AT_ONCE = Executors.newCachedThreadPool(task -> {
        Thread thread = new Thread(task, "execache-revalidation");
        thread.setDaemon(true);
        return thread;
    });

    /**
     * What one run gave: its result, the tool calls it made, why it may not be stored, and when
     * the earliest of the cached tool answers it used expires (null for none); {@code agentAnswered}: a call's answer
     * depended on what the run's agent answered, so the result is that caller's alone.
     */
    record Ran(ExecutionResult result, List<ToolCallRecord> calls, String notStoredBecause,
            Counter notStoredCounter, Map<String, String> dependsOn, Instant answersExpireAt, KeptOut keptOut,
            String trace, String label, boolean agentAnswered) {
    }

    /**
     * How an executor keeps its stored runs for revalidation: at most {@code maxEntries} copies taking at
     * most {@code maxBytes}, each for {@code keepFor}; none when {@code maxEntries} is 0.
     */
    record KeptForRevalidation(int maxEntries, long maxBytes, Duration keepFor) {
        boolean on() {
            return maxEntries > 0;
        }

        long maxEntryBytes() {
            return maxBytes / maxEntries;
        }
    }

    /**
     * What an executor gives every run it makes: the sandbox, its loop (store, clock, ticker), the rules
     * and tool versions runs are stored by, and how stored runs are kept for revalidation.
     */
    record Setup(Sandbox sandbox, PolicyLoop loop, CachePolicy policy, ToolVersionSource toolVersions,
            KeptForRevalidation kept) {
        /** The tools one run of {@code request} calls through, made for its caller. */
        RunTools runTools(ExecutionRequest request, CodeTools tools, CodeTools.Caller caller) {
            return new RunTools(tools, request.limits(), request.agent(), request.freshness(), caller, loop.store(),
                    loop.ticker());
        }

        /** The run of {@code request} in the sandbox, inside a span of its own. */
        ExecutionResult runInSandbox(ExecutionRequest request, RunTools runTools) {
            Telemetry telemetry = loop.store().telemetry();
            try (Telemetry.Span span = telemetry.start("deno run")) {
                runTools.traceUnder(telemetry.current());
                ExecutionResult result = sandbox.execute(request, runTools);
                if (!result.isSuccess()) {
                    span.failed(result.error().type().displayName(), result.error().message());
                }
                return result;
            }
        }
    }

    private final Setup setup;
    private final StoreGuard store;
    private final Clock clock;
    private final CachePolicy policy;
    private final ToolVersionSource toolVersions;
    private final ExecutionRequest request;
    private final String key;
    private final Map<String, String> versions;
    private final CodeTools tools;
    private final CodeTools.Caller caller;
    private volatile RunTools ranWith;
    private volatile String staleBecause;
    /** Answers a revalidation fetched before it found one changed: the run takes them instead of asking again. */
    private volatile Map<String, Deque<CodeToolCall>> fetched = Map.of();
    /** Whether this execution revalidated a stale run and found an answer changed. */
    private volatile boolean changed;

    Execution(Setup setup, ExecutionRequest request, String key, Map<String, String> versions, CodeTools tools,
            CodeTools.Caller caller) {
        this.caller = caller;
        this.setup = setup;
        this.store = setup.loop().store();
        this.clock = setup.loop().clock();
        this.policy = setup.policy();
        this.toolVersions = setup.toolVersions();
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
        ran.keptOut().addTo(counts);
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
        if (!setup.kept().on()) {
            return Optional.empty();
        }
        Optional<CacheEntry> copy = store.get(PolicyLoop.keptKey(key));
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
        RunTools runTools = setup.runTools(request, tools, caller);
        List<RunTrace.Step> renewed = new ArrayList<>();
        Map<String, Deque<CodeToolCall>> answers = new HashMap<>();
        boolean same = true;
        for (List<RunTrace.Step> round : trace.get().rounds()) {
            List<CodeToolCall> fresh = askAtOnce(runTools, round);
            for (int i = 0; i < round.size(); i++) {
                RunTrace.Step step = round.get(i);
                CodeToolCall call = fresh.get(i);
                answers.computeIfAbsent(RunTools.callName(step.server(), step.tool(), step.arguments()),
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
                : new KeptOut(stored.toolAnswerBytes(), RunTools.resultBytes(result), Map.of());
        Map<String, String> dependsOn = new TreeMap<>(versions);
        dependsOn.putAll(runTools.called());
        String text = new RunTrace(renewed).write().orElse(null);
        return Optional.of(new Ran(result, runTools.calls(), runTools.notStoredBecause(),
                runTools.notStoredCounter(), dependsOn, runTools.answersExpireAt(), keptOut, text, stored.label(),
                runTools.agentAnswered()));
    }
    @Override public boolean sharable(Ran ran) { return !ran.agentAnswered(); }
    @Override public Duration maxHold() { return request.limits().timeout().plus(FLIGHT_MARGIN); }
    @Override public GroupBound bound() { return null; }

    @Override
    public Ran run() {
        RunTools runTools = setup.runTools(request, tools, caller);
        runTools.prefetch(fetched);
        ranWith = runTools;
        ExecutionResult result;
        try {
            result = setup.runInSandbox(request, runTools);
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
        if ((notStored == null || notStoredCounter == Counter.UNCACHEABLE_TOOL_ANSWER_NOT_STORED) && result.isSuccess()
                && !result.nondeterminism().isEmpty()
                && !policy.cacheNondeterministic()) {
            notStored = "the code used " + String.join(", ", result.nondeterminism())
                    + " and cache_nondeterministic is false";
            notStoredCounter = Counter.UNCACHEABLE_NONDETERMINISTIC;
        }
        Map<String, String> dependsOn = new TreeMap<>(versions);
        dependsOn.putAll(runTools.called());
        String trace = result.nondeterminism().isEmpty() ? runTools.trace() : null;
        return new Ran(result, runTools.calls(), notStored, notStoredCounter, dependsOn, answersExpireAt,
                runTools.keptOut(result), trace, request.labelOrFirstLine(), runTools.agentAnswered());
    }

    /**
     * Keeps a copy of a run just stored, with its trace, for revalidation after its freshness
     * lapses: under a key of its own in its own group, depending on no tool (a tool's new version
     * or a write to its server removes the run, not this copy, so the next request revalidates).
     */
    void keepForRevalidation(Ran ran, Instant storedAt) {
        KeptForRevalidation keeping = setup.kept();
        if (ran.trace() == null || !keeping.on()) {
            return;
        }
        Map<String, String> reserved = new TreeMap<>();
        reserved.put(CacheEntry.TRACE, ran.trace());
        if (ran.keptOut().toolAnswerBytes() > 0) {
            reserved.put(CacheEntry.TOOL_ANSWER_BYTES, Long.toString(ran.keptOut().toolAnswerBytes()));
        }
        ExecutionResult result = ran.result();
        CacheEntry copy = new CacheEntry(PolicyLoop.keptKey(key), result.value(), result.console(),
                result.executionTime(), reserved, storedAt, storedAt.plus(keeping.keepFor()), 0, ran.label());
        if (copy.estimatedBytes() <= keeping.maxEntryBytes()) {
            store.put(copy, new GroupBound(KEPT_GROUP, keeping.maxEntries()));
        }
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
                : new KeptOut(entry.toolAnswerBytes(), RunTools.resultBytes(result), Map.of());
        return new Ran(result, List.of(), null, null, entry.dependsOnTools(), null, keptOut, null, entry.label(), false);
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
