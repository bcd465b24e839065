package dev.execache.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.CodeToolCall;
import dev.execache.core.spi.CodeTools;
import dev.execache.core.spi.Counter;
import dev.execache.core.spi.Sandbox;
import dev.execache.core.spi.CodeTools;
import dev.execache.core.spi.ToolVersionSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * What the policy keeps about a run of code that calls tools: the tools it really called and
 * their versions, exact invalidation, and the runs it never stores. The sandbox is a double that
 * makes the calls its "code" lists ({@code "a.read;b.read"}); the tools are a double too.
 */
class CodeToolsPolicyTest {
    private final MutableClock clock = new MutableClock();
    private final SimpleStore store = new SimpleStore(clock);
    private final Map<String, String> current = new HashMap<>(Map.of("a__read", "1", "a__write", "1", "b__read", "1",
            "pinned", "p1"));
    private final List<String> calls = new ArrayList<>();

    /** Versions that change without telling anyone: as a removal that has not reached this store yet. */
    private final ToolVersionSource quietVersions = () -> Map.copyOf(current);

    private final CodeTools tools = new CodeTools() {
        @Override
        public Map<String, List<String>> reachable() {
            return Map.of("a", List.of("read", "write"), "b", List.of("read"));
        }

        @Override
        public Set<String> names() {
            return Set.of("a__read", "a__write", "b__read");
        }

        @Override
        public boolean owns(String name) {
            return name.startsWith("a__") || name.startsWith("b__");
        }

        @Override
        public CodeToolCall call(String server, String tool, String argumentsJson, String agent, Freshness freshness) {
            calls.add(server + "." + tool);
            String name = server + "__" + tool;
            if (tool.equals("ask")) {
                // its server asked the run's agent, whose answer is in the result: that caller's alone
                return new CodeToolCall(name, current.get(name), ToolResult.ok("\"mine\"")
                        .withHint(CacheHint.AGENT_ANSWERED), false, CacheStatus.MISS, 6);
            }
            if (tool.equals("fail")) {
                return new CodeToolCall(name, current.get(name), ToolResult.error("no"), false, CacheStatus.MISS, 2);
            }
            boolean reads = tool.equals("read");
            return new CodeToolCall(name, current.get(name), ToolResult.ok("\"" + "x".repeat(10) + "\""), reads,
                    reads ? CacheStatus.MISS : CacheStatus.BYPASS, 12);
        }
    };

    /** Run before each run's code; the tests that hold a run in flight set it. */
    private volatile Runnable beforeRun = () -> { };
    private final AtomicInteger ran = new AtomicInteger();

    /** Makes the calls its code lists, returns how many answers were values; "random;" marks Math.random. */
    private final Sandbox sandbox = new Sandbox() {
        @Override
        public ExecutionResult execute(ExecutionRequest request, CodeTools tools) {
            ran.incrementAndGet();
            beforeRun.run();
            int values = 0;
            boolean random = false;
            for (String call : request.code().split(";")) {
                if (call.equals("random")) {
                    random = true;
                } else if (!call.isBlank()) {
                    String[] parts = call.split("\\.");
                    values += tools.call(parts[0], parts[1], "{}").answer().isError() ? 0 : 1;
                }
            }
            ExecutionResult result = ExecutionResult.success(Integer.toString(values), "", Duration.ofMillis(5));
            return random ? result.withNondeterminism(Set.of("Math.random")) : result;
        }
    };

    private CachedExecutor executor(ToolVersionSource versions, CachePolicy policy) {
        return CachedExecutor.builder(sandbox, store).toolVersions(versions).cachePolicy(policy).clock(clock)
                .codeTools(tools).build();
    }

    private static ExecutionRequest code(String code) {
        return new ExecutionRequest(code, null, Set.of(), Limits.DEFAULTS);
    }

    @Test
    void aRunDependsOnTheToolsItCalledAndOnHandWrittenVersionsNotOnEveryToolOffered() {
        MutableToolVersions versions = new MutableToolVersions(current);
        CachedExecutor executor = executor(versions, CachePolicy.DEFAULTS);

        ExecutionOutcome first = executor.execute(code("a.read"));

        assertThat(first.status()).isEqualTo(CacheStatus.MISS);
        assertThat(store.peek(first.key()).orElseThrow().dependsOnTools()).isEqualTo(new TreeMap<>(Map.of("a__read", "1",
                "pinned", "p1")));
        versions.set("b__read", "2");
        assertThat(executor.execute(code("a.read")).status()).isEqualTo(CacheStatus.HIT);
        versions.set("a__read", "2");
        // not a hit: its call is asked again, and since a__read answers as before, the run is revalidated
        assertThat(executor.execute(code("a.read")).status()).isEqualTo(CacheStatus.REVALIDATED);
        assertThat(calls).containsExactly("a.read", "a.read");
    }

    @Test
    void aRunsKeyStaysWhileItsServersToolsComeGoOrAreReadAndMovesWithAHandWrittenVersion() {
        MutableToolVersions versions = new MutableToolVersions(current);
        CachedExecutor executor = executor(versions, CachePolicy.DEFAULTS);
        String key = executor.policy().keyFor(code("a.read"));

        // a tool of b not offered yet (its server coming up), and a read of a's, both versioned by the gateway
        versions.set("b__search", "1");
        versions.set("a__resources/read", "r1");

        assertThat(executor.policy().keyFor(code("a.read"))).isEqualTo(key);
        versions.set("pinned", "p2");
        assertThat(executor.policy().keyFor(code("a.read"))).isNotEqualTo(key);
    }

    @Test
    void anEntryWhoseCalledToolHasANewVersionIsNotServedEvenBeforeItsRemovalArrives() {
        CachedExecutor executor = executor(quietVersions, CachePolicy.DEFAULTS);
        executor.execute(code("b.read"));

        current.put("b__read", "2");
        ExecutionOutcome again = executor.execute(code("b.read"));

        assertThat(again.status()).isEqualTo(CacheStatus.REVALIDATED);
        assertThat(calls).containsExactly("b.read", "b.read");
        assertThat(store.peek(again.key()).orElseThrow().toolVersions()).containsEntry("b__read", "2");
    }

    @Test
    void eachToolCallOfARunIsMadeForTheRunsCallerAndAHitMakesNone() {
        List<CodeTools.Caller> heardBy = new ArrayList<>();
        CodeTools heard = new CodeTools() {
            @Override
            public Map<String, List<String>> reachable() {
                return tools.reachable();
            }

            @Override
            public CodeToolCall call(String server, String tool, String argumentsJson, String agent, Freshness freshness) {
                return tools.call(server, tool, argumentsJson, agent, freshness);
            }

            @Override
            public CodeToolCall call(String server, String tool, String argumentsJson, String agent, Freshness freshness,
                    Caller caller) {
                heardBy.add(caller);
                return call(server, tool, argumentsJson, agent, freshness);
            }
        };
        CachedExecutor executor = CachedExecutor.builder(sandbox, store).toolVersions(quietVersions).clock(clock)
                .codeTools(heard).build();
        CodeTools.Caller caller = new CodeTools.Caller() {
        };

        ExecutionOutcome first = executor.execute(code("a.read;b.read"), caller);
        ExecutionOutcome hit = executor.execute(code("a.read;b.read"), caller);
        executor.execute(code("b.read"));

        assertThat(first.status()).isEqualTo(CacheStatus.MISS);
        assertThat(hit.status()).isEqualTo(CacheStatus.HIT);
        assertThat(heardBy).containsExactly(caller, caller, CodeTools.Caller.NONE);
    }

    @Test
    void anIdenticalRunThatWaitedForOneThatReadItsAgentsAnswerRunsItself() throws Exception {
        CachedExecutor executor = executor(quietVersions, CachePolicy.DEFAULTS);
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        beforeRun = () -> {
            if (entered.getCount() > 0) {
                entered.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        CompletableFuture<ExecutionOutcome> leader =
                CompletableFuture.supplyAsync(() -> executor.execute(code("a.ask;")));
        entered.await();
        CompletableFuture<ExecutionOutcome> waiter = new CompletableFuture<>();
        Thread follower = new Thread(() -> waiter.complete(executor.execute(code("a.ask;"))));
        follower.start();
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(1))
                .until(() -> follower.getState() == Thread.State.WAITING);

        release.countDown();

        assertThat(leader.get().status()).isEqualTo(CacheStatus.MISS);
        assertThat(waiter.get().status()).isEqualTo(CacheStatus.MISS);
        assertThat(ran).hasValue(2);
        assertThat(calls).containsExactly("a.ask", "a.ask");
    }

    @Test
    void aRunThatCalledANonCacheableToolIsNotStoredAndSaysWhy() {
        CachedExecutor executor = executor(quietVersions, CachePolicy.DEFAULTS);

        ExecutionOutcome first = executor.execute(code("a.read;a.write"));
        ExecutionOutcome second = executor.execute(code("a.read;a.write"));

        assertThat(first.notStoredBecause()).isEqualTo("a__write is not cached (it may change something), so neither is the run");
        assertThat(store.counters().totals().get(Counter.UNCACHEABLE_MUTATING_TOOL)).isPositive();
        assertThat(second.status()).isEqualTo(CacheStatus.MISS);
        assertThat(first.toolCalls()).extracting(ToolCallRecord::tool, ToolCallRecord::status)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("a__read", CacheStatus.MISS),
                        org.assertj.core.groups.Tuple.tuple("a__write", CacheStatus.BYPASS));
        assertThat(store.size()).isZero();
        assertThat(calls).hasSize(4);
    }

    @Test
    void aRunWhoseCallFailedIsNotStored() {
        ExecutionOutcome outcome = executor(quietVersions, CachePolicy.DEFAULTS).execute(code("a.fail"));

        assertThat(outcome.notStoredBecause()).isEqualTo("the call of a__fail failed");
        assertThat(store.counters().totals()).containsEntry(Counter.UNCACHEABLE_TOOL_FAILED, 1L);
        assertThat(store.size()).isZero();
    }

    @Test
    void callsPastTheCapAreErrorsAndTheRunIsNotStored() {
        ExecutionOutcome outcome = executor(quietVersions, CachePolicy.DEFAULTS).execute(new ExecutionRequest(
                "a.read;a.read;a.read;a.read", null, Set.of(), Limits.DEFAULTS.withMaxToolCalls(2)));

        assertThat(outcome.result().value()).isEqualTo("2");
        assertThat(calls).hasSize(2);
        assertThat(outcome.notStoredBecause()).isEqualTo("the run made more tool calls than its limit of 2");
        assertThat(store.counters().totals()).containsEntry(Counter.UNCACHEABLE_TOO_MANY_TOOL_CALLS, 1L);
    }

    @Test
    void answersPastTheByteCapAreErrorsAndTheRunIsNotStored() {
        ExecutionOutcome outcome = executor(quietVersions, CachePolicy.DEFAULTS).execute(new ExecutionRequest(
                "a.read;a.read;a.read", null, Set.of(), Limits.DEFAULTS.withMaxToolBytes(30)));

        assertThat(outcome.result().value()).isEqualTo("2");
        assertThat(outcome.notStoredBecause()).isEqualTo("the run's tool calls returned more than its limit of 30 bytes");
        assertThat(store.counters().totals()).containsEntry(Counter.UNCACHEABLE_TOOL_RESULTS_TOO_LARGE, 1L);
    }

    @Test
    void nondeterministicRunsAreStoredByDefaultAndNotWhenThePolicySaysSo() {
        ExecutionOutcome stored = executor(quietVersions, CachePolicy.DEFAULTS).execute(code("random;a.read"));
        ExecutionOutcome kept = executor(quietVersions, CachePolicy.DEFAULTS.withCacheNondeterministic(false))
                .execute(code("random;b.read"));

        assertThat(stored.notStoredBecause()).isNull();
        assertThat(store.peek(stored.key())).isPresent();
        assertThat(kept.result().nondeterminism()).containsExactly("Math.random");
        assertThat(kept.notStoredBecause()).isEqualTo("the code used Math.random and cache_nondeterministic is false");
        assertThat(store.peek(kept.key())).isEmpty();
        assertThat(store.counters().totals()).containsEntry(Counter.UNCACHEABLE_NONDETERMINISTIC, 1L)
                .containsEntry(Counter.MISSES, 2L).doesNotContainKey(Counter.FAILED);
    }

    @Test
    void aStoredNondeterministicRunSaysSoInItsEntryAndOnEveryHit() {
        CachedExecutor executor = executor(quietVersions, CachePolicy.DEFAULTS);

        ExecutionOutcome first = executor.execute(code("random;a.read"));
        ExecutionOutcome hit = executor.execute(code("random;a.read"));
        ExecutionOutcome plain = executor.execute(code("b.read"));
        ExecutionOutcome plainHit = executor.execute(code("b.read"));

        CacheEntry entry = store.peek(first.key()).orElseThrow();
        assertThat(entry.nondeterminism()).containsExactly("Math.random");
        assertThat(entry.dependsOnTools()).isEqualTo(Map.of("a__read", "1", "pinned", "p1"));
        assertThat(hit.status()).isEqualTo(CacheStatus.HIT);
        assertThat(hit.result().nondeterminism()).containsExactly("Math.random");
        assertThat(plainHit.status()).isEqualTo(CacheStatus.HIT);
        assertThat(plainHit.result().nondeterminism()).isEmpty();
        assertThat(store.peek(plain.key()).orElseThrow().toolVersions()).doesNotContainKey(CacheEntry.NONDETERMINISM);
        assertThat(calls).containsExactly("a.read", "b.read");
    }

    @Test
    void withoutCachingCallsStillGoThroughAndAreListed() {
        ExecutionOutcome outcome = executor(quietVersions, CachePolicy.DEFAULTS.withEnabled(false))
                .execute(code("a.read"));

        assertThat(outcome.status()).isEqualTo(CacheStatus.BYPASS);
        assertThat(store.counters().totals()).containsEntry(Counter.BYPASSED, 1L).doesNotContainKey(Counter.MISSES);
        assertThat(outcome.toolCalls()).extracting(ToolCallRecord::tool).containsExactly("a__read");
    }

    @Test
    void aRunKeepsOutOfTheAgentTheToolAnswersItConsumedLessItsResultAndAHitCountsThemAgain() {
        CachedExecutor executor = executor(quietVersions, CachePolicy.DEFAULTS);
        ExecutionRequest request = code("a.read;b.read").withAgent("claude-code");

        ExecutionOutcome ran = executor.execute(request);

        // two answers of 12 bytes; the result "2" is 1 byte
        assertThat(ran.keptOut()).isEqualTo(new KeptOut(24, 1, Map.of("a__read", 12L, "b__read", 12L)));
        assertThat(ran.keptOut().bytes()).isEqualTo(23);
        assertThat(ran.keptOut().estimatedTokens()).isEqualTo(5);
        assertThat(store.counters().totals()).containsEntry(Counter.TOOL_ANSWER_BYTES, 24L)
                .containsEntry(Counter.KEPT_OUT_BYTES, 23L);
        assertThat(store.counters().perTool().get("a__read")).containsEntry(Counter.TOOL_ANSWER_BYTES, 12L);
        assertThat(store.counters().perAgent().get("claude-code")).containsEntry(Counter.MISSES, 1L)
                .containsEntry(Counter.KEPT_OUT_BYTES, 23L).containsEntry(Counter.TOOL_ANSWER_BYTES, 24L);

        ExecutionOutcome hit = executor.execute(request);

        assertThat(hit.status()).isEqualTo(CacheStatus.HIT);
        assertThat(hit.keptOut()).isEqualTo(new KeptOut(24, 1, Map.of()));
        assertThat(store.counters().totals()).containsEntry(Counter.KEPT_OUT_BYTES, 46L)
                .containsEntry(Counter.TOOL_ANSWER_BYTES, 24L);
        assertThat(store.counters().perAgent().get("claude-code")).containsEntry(Counter.HITS, 1L)
                .containsEntry(Counter.KEPT_OUT_BYTES, 46L);
        assertThat(executor.policy().stats().keptOutTokens()).isEqualTo(11);
        assertThat(executor.policy().stats().agents().get("claude-code").keptOutBytes()).isEqualTo(46);
    }

    @Test
    void aRunThatCalledNoToolsKeepsNothingOutAndCountsNothingAsKeptOut() {
        CachedExecutor executor = executor(quietVersions, CachePolicy.DEFAULTS);

        ExecutionOutcome ran = executor.execute(code("random").withAgent("cli"));

        assertThat(ran.keptOut()).isEqualTo(KeptOut.NONE);
        assertThat(store.counters().totals().getOrDefault(Counter.KEPT_OUT_BYTES, 0L)).isZero();
        assertThat(store.counters().perAgent().get("cli")).containsEntry(Counter.MISSES, 1L);
    }

    @Test
    void aResultLargerThanTheAnswersItUsedKeepsNothingOut() {
        CachedExecutor executor = executor(quietVersions, CachePolicy.DEFAULTS);
        CachedExecutor wordy = CachedExecutor.builder((request, runTools) -> { runTools.call("a", "read", "{}"); return ExecutionResult.success("\"" + "y".repeat(40) + "\"", "", Duration.ofMillis(5)); }, store).toolVersions(quietVersions).clock(clock).codeTools(tools).build();

        ExecutionOutcome ran = wordy.execute(code("a.read"));

        assertThat(ran.keptOut().toolAnswerBytes()).isEqualTo(12);
        assertThat(ran.keptOut().resultBytes()).isEqualTo(42);
        assertThat(ran.keptOut().bytes()).isZero();
        assertThat(store.counters().totals().getOrDefault(Counter.KEPT_OUT_BYTES, 0L)).isZero();
        assertThat(executor.policy().stats().toolAnswerBytes()).isEqualTo(12);
    }
}
