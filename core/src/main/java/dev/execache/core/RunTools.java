package dev.execache.core;

import dev.execache.core.spi.CodeToolCall;
import dev.execache.core.spi.CodeTools;
import dev.execache.core.spi.Counter;
import dev.execache.core.spi.Telemetry;
import dev.execache.core.spi.ToolCallCancelledException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CancellationException;

/**
 * The tools of one run: every call goes to the {@link CodeTools} under the run's limits, and
 * is recorded, with the version of the tool it reached and whether its answer may be reused.
 */
final class RunTools implements CodeTools {
    private final StoreGuard store;
    private final Ticker ticker;
    private final CodeTools tools;
    private final Limits limits;
    private final String agent;
    private final Freshness freshness;
    private final Caller caller;
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
    /** Why the run may be kept only for revalidation: an answer it used was not stored; null when all were. */
    private String answerNotStoredBecause;
    /** The run's calls as its trace keeps them, in the order the code made them. */
    private final List<RunTrace.Step> steps = new ArrayList<>();
    /** Whether a call could not be kept in the trace (the run is then kept without one). */
    private boolean untraced;
    /** Whether a call's answer depended on what the run's agent answered its server: the run's result is then its own. */
    private boolean agentAnswered;
    /** Answers fetched just now by a revalidation that found one changed, by call: the code's calls take them. */
    private final Map<String, Deque<CodeToolCall>> prefetched = new HashMap<>();
    /** The call being made ({@code SERVER__TOOL}) and since when; null between calls. */
    private String inFlight;
    private long inFlightSince;
    private boolean ended;
    /** The run's span, parent of its calls' spans: calls arrive on another thread than the run's. */
    private volatile Map<String, String> traceParent = Map.of();

    RunTools(CodeTools tools, Limits limits, String agent, Freshness freshness, Caller caller, StoreGuard store,
            Ticker ticker) {
        this.caller = caller;
        this.store = store;
        this.ticker = ticker;
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
    public boolean owns(String name) {
        return tools.owns(name);
    }

    @Override
    public Map<String, String> identities() {
        return tools.identities();
    }

    /** Counted for the run's agent, at the run's freshness, heard by the run's caller: the sandbox passes none of them. */
    @Override
    public CodeToolCall call(String server, String tool, String argumentsJson, String agent, Freshness freshness) {
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
                call = tools.call(server, tool, argumentsJson, agent, freshness, caller);
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
            if (call.answer().hint() == CacheHint.AGENT_ANSWERED) {
                agentAnswered = true;
            }
            if (call.cacheable() && !call.stored() && answerNotStoredBecause == null) {
                String because = call.outcome().notCachedBecause();
                answerNotStoredBecause = "the answer of " + call.tool() + " it used was not stored"
                        + (because == null ? "" : " (" + because + ")") + ": the run is no fresher than its answers";
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

    /**
     * Why the run is not stored: a reason of its own first; else, when an answer it used was not stored,
     * {@link Counter#UNCACHEABLE_TOOL_ANSWER_NOT_STORED} (the run is then kept only for revalidation).
     */
    synchronized Counter notStoredCounter() {
        return notStoredCounter != null || answerNotStoredBecause == null ? notStoredCounter
                : Counter.UNCACHEABLE_TOOL_ANSWER_NOT_STORED;
    }

    synchronized List<ToolCallRecord> calls() {
        return List.copyOf(calls);
    }

    synchronized Map<String, String> called() {
        return Map.copyOf(called);
    }

    synchronized boolean agentAnswered() {
        return agentAnswered;
    }

    synchronized String notStoredBecause() {
        return notStoredBecause != null ? notStoredBecause : answerNotStoredBecause;
    }

    synchronized Instant answersExpireAt() {
        return answersExpireAt;
    }

    /** The write generations the run's answers were read at; empty if a server was written to between its calls. */
    synchronized Optional<Map<String, Long>> writesSeen() {
        return writtenBetweenCalls ? Optional.empty() : Optional.of(Map.copyOf(writesSeen));
    }

    /** One call as a revalidation and the run after it name it: the same server, tool and arguments are the same call. */
    static String callName(String server, String tool, String argumentsJson) {
        return server + "\n" + tool + "\n" + argumentsJson;
    }

    /** The bytes a run returned to the agent: its result's JSON and its console output (UTF-8). */
    static long resultBytes(ExecutionResult result) {
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
}
