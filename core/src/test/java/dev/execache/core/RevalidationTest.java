package dev.execache.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.CodeToolCall;
import dev.execache.core.spi.CodeTools;
import dev.execache.core.spi.Sandbox;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A stale run revalidated, not re-run: the policy's side, with doubles for the sandbox (its "code"
 * lists the calls it makes, {@code "a.read;b.read"}, made together unless it starts with {@code "seq:"})
 * and the tools (each answers what {@link #data} holds for it). Real Deno, stores and servers are in
 * app-cli's {@code RevalidationTest}.
 */
class RevalidationTest {
    private final MutableClock clock = new MutableClock();
    private final SimpleStore store = new SimpleStore(clock);
    private final MutableToolVersions versions = new MutableToolVersions(Map.of("a__read", "1", "b__read", "1",
            "c__read", "1"));
    private final Map<String, String> data = new ConcurrentHashMap<>(Map.of("a", "1", "b", "2", "c", "3"));
    private final List<String> asked = new CopyOnWriteArrayList<>();
    private final AtomicInteger runs = new AtomicInteger();
    private volatile CountDownLatch together;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger mostAtOnce = new AtomicInteger();

    private final CodeTools tools = new CodeTools() {
        @Override
        public Map<String, List<String>> reachable() {
            return Map.of("a", List.of("read"), "b", List.of("read"), "c", List.of("read"));
        }

        @Override
        public CodeToolCall call(String server, String tool, String argumentsJson, String agent, Freshness freshness) {
            asked.add(server);
            mostAtOnce.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
            try {
                return meet(server);
            } finally {
                inFlight.decrementAndGet();
            }
        }

        private CodeToolCall meet(String server) {
            CountDownLatch meeting = together;
            if (meeting != null) {
                // each call waits (boundedly) for the others: only calls made at once all answer "met"
                meeting.countDown();
                try {
                    if (!meeting.await(20, TimeUnit.SECONDS)) {
                        return answer(server, "alone");
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return answer(server, "interrupted");
                }
            }
            return answer(server, data.get(server));
        }

        private CodeToolCall answer(String server, String value) {
            ToolCallOutcome outcome = new ToolCallOutcome(ToolResult.ok("{\"value\":\"" + value + "\"}"), CacheStatus.MISS,
                    clock.instant().plus(Duration.ofSeconds(10)), clock.instant(), null);
            return new CodeToolCall(server + "__read", versions.versions().get(server + "__read"), outcome, true, 15,
                    Map.of());
        }
    };

    /** Sums the values its calls answered; made together (0 answers read) unless the code starts with "seq:". */
    private final Sandbox sandbox = (request, codeTools) -> {
        runs.incrementAndGet();
        boolean inOrder = request.code().startsWith("seq:");
        String[] calls = request.code().replace("seq:", "").split(";");
        long sum = 0;
        for (int i = 0; i < calls.length; i++) {
            String[] parts = calls[i].split("\\.");
            String json = codeTools.callAfter(parts[0], parts[1], "{\"n\":" + i + "}", inOrder ? i : 0).answer().json();
            sum += Long.parseLong(json.replaceAll("\\D", "").isEmpty() ? "0" : json.replaceAll("\\D", ""));
        }
        return ExecutionResult.success(Long.toString(sum), "", Duration.ofSeconds(3));
    };

    private final CachedExecutor executor = executor(CachePolicy.DEFAULTS);

    private CachedExecutor executor(CachePolicy policy) {
        return builder().cachePolicy(policy).build();
    }

    private CachedExecutor.Builder builder() {
        return CachedExecutor.builder(sandbox, store).toolVersions(versions).clock(clock).ticker(new MutableTicker())
                .codeTools(tools);
    }

    private static ExecutionRequest code(String code) {
        return new ExecutionRequest(code, null, Set.of(), Limits.DEFAULTS);
    }

    @Test
    void aRunKeepsItsTraceEachCallInOrderWithTheDigestOfItsAnswer() {
        ExecutionOutcome ran = executor.execute(code("a.read;b.read;c.read"));

        RunTrace trace = RunTrace.of(store.peek(ran.key()).orElseThrow()).orElseThrow();
        assertThat(trace.steps()).extracting(RunTrace.Step::name).containsExactly("a__read", "b__read", "c__read");
        assertThat(trace.steps().get(1).answerDigest())
                .isEqualTo(RunTrace.digestOf(ToolResult.ok("{\"value\":\"2\"}")));
        assertThat(trace.steps().get(2).argumentsDigest()).isEqualTo(CacheKeys.sha256("{\"n\":2}"));
        assertThat(trace.steps()).extracting(RunTrace.Step::seen).containsExactly(0, 0, 0);
        assertThat(trace.rounds()).hasSize(1);
    }

    @Test
    void aStaleRunWhoseAnswersAreUnchangedIsRevalidatedWithoutRunningItsCallsAskedAtOnce() {
        ExecutionOutcome ran = executor.execute(code("a.read;b.read;c.read"));
        clock.advance(Duration.ofSeconds(11));
        together = new CountDownLatch(3);

        ExecutionOutcome again = executor.execute(code("a.read;b.read;c.read"));

        assertThat(again.status()).isEqualTo(CacheStatus.REVALIDATED);
        assertThat(again.result().value()).isEqualTo(ran.result().value()).isEqualTo("6");
        assertThat(runs).hasValue(1);
        assertThat(asked).hasSize(6);
        assertThat(mostAtOnce).hasValue(3);
        assertThat(again.toolCalls()).hasSize(3);
        assertThat(again.saved()).isEqualTo(Duration.ofSeconds(3));
        assertThat(again.expiresAt()).isEqualTo(clock.instant().plus(Duration.ofSeconds(10)));
        CacheStats stats = executor.policy().stats();
        assertThat(stats.revalidations()).isEqualTo(1);
        assertThat(stats.revalidationSaved()).isEqualTo(Duration.ofSeconds(3));
        assertThat(stats.hits()).isZero();
        assertThat(stats.misses()).isEqualTo(1);
        together = null;
        assertThat(executor.execute(code("a.read;b.read;c.read")).status()).isEqualTo(CacheStatus.HIT);
    }

    @Test
    void callsMadeAfterReadingEarlierAnswersAreAskedAgainInOrder() {
        executor.execute(code("seq:a.read;b.read;c.read"));
        clock.advance(Duration.ofSeconds(11));
        mostAtOnce.set(0);

        ExecutionOutcome again = executor.execute(code("seq:a.read;b.read;c.read"));

        assertThat(again.status()).isEqualTo(CacheStatus.REVALIDATED);
        assertThat(asked).containsExactly("a", "b", "c", "a", "b", "c");
        assertThat(mostAtOnce).hasValue(1);
        assertThat(RunTrace.read(store.peek(again.key()).orElseThrow().toolVersions().get(CacheEntry.TRACE))
                .orElseThrow().rounds()).hasSize(3);
    }

    @Test
    void oneChangedAnswerRunsTheCodeWithTheAnswersJustFetchedAskingNoneTwice() {
        executor.execute(code("a.read;b.read;c.read"));
        clock.advance(Duration.ofSeconds(11));
        data.put("b", "20");
        asked.clear();

        ExecutionOutcome again = executor.execute(code("a.read;b.read;c.read"));

        assertThat(again.status()).isEqualTo(CacheStatus.MISS);
        assertThat(again.result().value()).isEqualTo("24");
        assertThat(runs).hasValue(2);
        assertThat(asked).containsExactlyInAnyOrder("a", "b", "c");
        assertThat(executor.policy().stats().revalidationsChanged()).isEqualTo(1);
        assertThat(executor.execute(code("a.read;b.read;c.read")).status()).isEqualTo(CacheStatus.HIT);
    }

    @Test
    void aToolsNewVersionWithTheSameAnswersRevalidatesAndTheRenewedEntryNamesTheNewVersion() {
        ExecutionOutcome ran = executor.execute(code("a.read;b.read"));

        versions.set("b__read", "2");
        ExecutionOutcome again = executor.execute(code("a.read;b.read"));

        assertThat(again.status()).isEqualTo(CacheStatus.REVALIDATED);
        assertThat(runs).hasValue(1);
        assertThat(store.peek(ran.key()).orElseThrow().dependsOnTools()).containsEntry("b__read", "2");
    }

    @Test
    void aRunRemovedByAWriteIsRevalidatedNeverHit() {
        ExecutionOutcome ran = executor.execute(code("a.read"));
        store.remove(ran.key());
        data.put("a", "5");

        ExecutionOutcome again = executor.execute(code("a.read"));

        assertThat(again.status()).isEqualTo(CacheStatus.MISS);
        assertThat(again.result().value()).isEqualTo("5");
    }

    @Test
    void aNondeterministicRunIsNeverKeptForRevalidation() {
        Sandbox random = (request, codeTools) -> {
            runs.incrementAndGet();
            codeTools.callAfter("a", "read", "{}", 0);
            return ExecutionResult.success("1", "", Duration.ofSeconds(1)).withNondeterminism(Set.of("Math.random"));
        };
        CachedExecutor executor = CachedExecutor.builder(random, store).toolVersions(versions).clock(clock).codeTools(tools)
                .build();

        ExecutionOutcome ran = executor.execute(code("random"));
        clock.advance(Duration.ofSeconds(11));

        assertThat(store.peek(ran.key()).isPresent() || store.peek(PolicyLoop.keptKey(ran.key())).isPresent())
                .isFalse();
        assertThat(executor.execute(code("random")).status()).isEqualTo(CacheStatus.MISS);
    }

    @Test
    void runsKeptForRevalidationAreBoundedAndNeverServedOnceTheirTimeToBeKeptIsOver() {
        CachedExecutor executor = builder().keepForRevalidation(2, 1024 * 1024, Duration.ofMinutes(1)).build();
        ExecutionOutcome first = executor.execute(code("a.read"));
        executor.execute(code("b.read"));
        executor.execute(code("c.read"));

        assertThat(store.peek(PolicyLoop.keptKey(first.key()))).isEmpty();
        clock.advance(Duration.ofMinutes(2));
        assertThat(store.entries()).isEmpty();
        assertThat(executor.execute(code("b.read")).status()).isEqualTo(CacheStatus.MISS);
    }

    @Test
    void withNoneKeptAStaleRunRunsAgain() {
        CachedExecutor executor = builder().keepForRevalidation(0, 0, Duration.ofMinutes(1)).build();
        executor.execute(code("a.read"));
        clock.advance(Duration.ofSeconds(11));

        assertThat(executor.execute(code("a.read")).status()).isEqualTo(CacheStatus.MISS);
        assertThat(runs).hasValue(2);
    }

    @Test
    void aTraceThatIsNotOneIsIgnored() {
        assertThat(RunTrace.read("x a read 1 d {}")).isEmpty();
        assertThat(RunTrace.read("1 a read 1 d {}")).isEmpty();
        assertThat(RunTrace.read("0 a read 1 d {}\n1 b read 1 d {\"x\": 1}").orElseThrow().steps().get(1).arguments())
                .isEqualTo("{\"x\": 1}");
    }
}
