package dev.execache.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.execache.core.spi.CodeToolCall;
import dev.execache.core.spi.CodeTools;
import dev.execache.core.spi.Counter;
import dev.execache.core.spi.Sandbox;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Freshness a caller can ask for and see: no-cache and max-age, what an outcome says of its age
 * and why it was not cached, a server's {@code no-cache} hint, runs no fresher than their answers,
 * and removals counted by cause.
 */
class FreshnessTest {
    private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final MutableTicker ticker = new MutableTicker();
    private final SimpleStore store = new SimpleStore(clock);
    private final AtomicInteger calls = new AtomicInteger();
    /** How long the tool takes to answer, by the ticker. */
    private final AtomicReference<Duration> answerTime = new AtomicReference<>(Duration.ofMillis(40));
    private final AtomicReference<CacheHint> hint = new AtomicReference<>(CacheHint.NONE);
    private final MutableToolVersions versions = new MutableToolVersions(Map.of("fs__read", "1", "fs__list", "1"));

    private final ToolInvoker tool = (name, args) -> {
        ticker.advance(answerTime.get());
        return ToolResult.ok("{\"call\":" + calls.incrementAndGet() + "}").withHint(hint.get());
    };

    private CachedTool.Builder builder() {
        return CachedTool.builder(tool, store).clock(clock).ticker(ticker).toolVersions(versions);
    }

    @Test
    void directivesAreReadAsHttpWritesThemAndAnythingElseIsRefusedByName() {
        assertThat(Freshness.parse("no-cache")).isEqualTo(Freshness.NO_CACHE);
        assertThat(Freshness.parse(" Max-Age=30 ")).isEqualTo(Freshness.maxAge(Duration.ofSeconds(30)));
        assertThat(Freshness.parse("max-age=0").isNoCache()).isTrue();
        assertThatThrownBy(() -> Freshness.parse("max-age=soon")).hasMessageContaining("max-age=SECONDS")
                .hasMessageContaining("max-age=soon");
        assertThatThrownBy(() -> Freshness.parse("no-store")).hasMessageContaining("\"no-store\"");
    }

    @Test
    void aNoCacheRequestAsksTheToolAgainAndItsAnswerReplacesTheStoredOne() {
        CachedTool cached = builder().build();
        assertThat(cached.call(ToolCallRequest.of("fs__read", Map.of("path", "a"))).status()).isEqualTo(CacheStatus.MISS);
        clock.advance(Duration.ofSeconds(20));

        ToolCallOutcome fresh = cached.call(ToolCallRequest.of("fs__read", Map.of("path", "a")).withFreshness(Freshness.NO_CACHE));

        assertThat(fresh.status()).isEqualTo(CacheStatus.MISS);
        assertThat(fresh.result().json()).isEqualTo("{\"call\":2}");
        assertThat(fresh.storedAt()).isEqualTo(clock.instant());
        ToolCallOutcome next = cached.call(ToolCallRequest.of("fs__read", Map.of("path", "a")));
        assertThat(next.status()).isEqualTo(CacheStatus.HIT);
        assertThat(next.result().json()).isEqualTo("{\"call\":2}");
        assertThat(store.counters().totals()).containsEntry(Counter.REFRESHED, 1L).containsEntry(Counter.CALLS, 3L);
    }

    @Test
    void maxAgeTakesAStoredAnswerYoungEnoughAndAsksAgainForAnOlderOne() {
        CachedTool cached = builder().build();
        cached.call(ToolCallRequest.of("fs__read", Map.of("path", "a")));
        clock.advance(Duration.ofSeconds(30));

        ToolCallOutcome young = cached.call(ToolCallRequest.of("fs__read", Map.of("path", "a")).withFreshness(Freshness.maxAge(Duration.ofSeconds(30))));
        ToolCallOutcome old = cached.call(ToolCallRequest.of("fs__read", Map.of("path", "a")).withFreshness(Freshness.maxAge(Duration.ofSeconds(29))));

        assertThat(young.status()).isEqualTo(CacheStatus.HIT);
        assertThat(young.storedAt()).isEqualTo(clock.instant().minusSeconds(30));
        assertThat(young.expiresAt()).isEqualTo(clock.instant().plus(CachePolicy.DEFAULT_TTL).minusSeconds(30));
        assertThat(old.status()).isEqualTo(CacheStatus.MISS);
        assertThat(old.result().json()).isEqualTo("{\"call\":2}");
        assertThat(calls).hasValue(2);
    }

    @Test
    void aCallItsCallerKeepsOutOfTheCacheIsAskedEveryTimeAndCountedUnderTheReasonItGives() {
        CachedTool cached = builder().build();
        ToolCallRequest.Uncached local = new ToolCallRequest.Uncached(false, "a local server's read: asked every time",
                Counter.UNCACHEABLE_LOCAL_SERVER);

        ToolCallOutcome first = cached.call(ToolCallRequest.of("fs__read", Map.of("path", "a")).uncached(local));
        ToolCallOutcome second = cached.call(ToolCallRequest.of("fs__read", Map.of("path", "a")).uncached(local));

        assertThat(first.status()).isEqualTo(CacheStatus.BYPASS);
        assertThat(second.result().json()).isEqualTo("{\"call\":2}");
        assertThat(second.notCachedBecause()).isEqualTo("a local server's read: asked every time");
        assertThat(store.counters().perTool().get("fs__read")).containsEntry(Counter.CALLS, 2L)
                .containsEntry(Counter.UNCACHEABLE_LOCAL_SERVER, 2L).doesNotContainKey(Counter.BYPASSED);
        assertThat(CacheStats.of(store).uncacheable()).containsEntry("local_server", 2L);
        assertThat(store.size()).isZero();
    }

    @Test
    void howFastAToolAnswersNeverDecidesWhetherItIsCached() {
        answerTime.set(Duration.ofNanos(1000));
        CachedTool cached = builder().build();

        cached.call(ToolCallRequest.of("fs__read", Map.of("path", "a")));

        assertThat(cached.call(ToolCallRequest.of("fs__read", Map.of("path", "a"))).status()).isEqualTo(CacheStatus.HIT);
    }

    @Test
    void anAnswerWithTheServersNoCacheHintIsNotStored() {
        CachedTool cached = builder().build();
        hint.set(CacheHint.NO_CACHE);

        ToolCallOutcome first = cached.call(ToolCallRequest.of("fs__read", Map.of("path", "a")));

        assertThat(first.notCachedBecause()).isEqualTo("the server said not to cache it (cache_hint: no-cache)");
        assertThat(cached.call(ToolCallRequest.of("fs__read", Map.of("path", "a"))).status()).isEqualTo(CacheStatus.MISS);
        assertThat(store.counters().totals()).containsEntry(Counter.UNCACHEABLE_SERVER_HINT, 2L);
    }

    @Test
    void anAnswerThatDependedOnTheAgentIsNotStoredAndSaysWhy() {
        CachedTool cached = builder().build();
        hint.set(CacheHint.AGENT_ANSWERED);

        ToolCallOutcome first = cached.call(ToolCallRequest.of("fs__read", Map.of("path", "a")));

        assertThat(first.status()).isEqualTo(CacheStatus.MISS);
        assertThat(first.notCachedBecause()).contains("the server asked the agent during the call");
        assertThat(store.size()).isZero();
    }

    @Test
    void aFreshRequestWhoseAnswerIsNotStoredStillRemovesTheOlderOne() {
        CachedTool cached = builder().build();
        cached.call(ToolCallRequest.of("fs__read", Map.of("path", "a")));
        hint.set(CacheHint.NO_CACHE);

        cached.call(ToolCallRequest.of("fs__read", Map.of("path", "a")).withFreshness(Freshness.NO_CACHE));

        assertThat(store.size()).isZero();
    }

    @Test
    void removalsAreCountedAsInvalidationsByCauseAndUncachedCallsAsCallsOfTheirTool() {
        CachedTool cached = builder().build();
        cached.call(ToolCallRequest.of("fs__read", Map.of("path", "a")));
        cached.call(ToolCallRequest.of("fs__read", Map.of("path", "b")));
        cached.call(ToolCallRequest.of("fs__write", Map.of("path", "a")).uncached(true));
        assertThat(cached.policy().clear("fs__*", RemovalCause.WRITE)).isEqualTo(2);
        cached.call(ToolCallRequest.of("fs__read", Map.of("path", "a")));
        assertThat(cached.policy().clear("fs__read")).isEqualTo(1);
        cached.call(ToolCallRequest.of("fs__read", Map.of("path", "a")));
        versions.set("fs__read", "2");
        cached.call(ToolCallRequest.of("fs__list", Map.of()));
        assertThat(cached.policy().clear("fs__list", RemovalCause.RESOURCE)).isEqualTo(1);

        CacheStats stats = CacheStats.of(store);
        assertThat(stats.invalidations()).isEqualTo(5);
        assertThat(stats.removalsByCause()).containsExactly(Map.entry("write", 2L), Map.entry("version", 1L),
                Map.entry("resource", 1L), Map.entry("hand", 1L), Map.entry("expiry", 0L));
        assertThat(stats.calls()).isEqualTo(6);
        assertThat(stats.tools().get("fs__write").calls()).isEqualTo(1);
        assertThat(stats.tools().get("fs__read").calls()).isEqualTo(4);
    }

    @Test
    void aRunAskedFreshAsksItsToolCallsAsFreshAndSaysHowOldItsResultIs() {
        List<Freshness> asked = new ArrayList<>();
        CodeTools tools = new CodeTools() {
            @Override
            public Map<String, List<String>> reachable() {
                return Map.of("fs", List.of("read"));
            }

            @Override
            public CodeToolCall call(String server, String name, String argumentsJson) {
                throw new AssertionError("the run's freshness was not passed on");
            }

            @Override
            public CodeToolCall call(String server, String name, String argumentsJson, String agent,
                    Freshness freshness) {
                asked.add(freshness);
                return new CodeToolCall("fs__read", "1", ToolResult.ok("\"text\""), true, CacheStatus.MISS, 6);
            }
        };
        Sandbox sandbox = (request, runTools) -> {
            runTools.call("fs", "read", "{}");
            return ExecutionResult.success("1", "", Duration.ofMillis(5));
        };
        CachedExecutor executor = CachedExecutor.builder(sandbox, store).toolVersions(versions).clock(clock).ticker(ticker)
                .codeTools(tools).build();
        ExecutionRequest request = new ExecutionRequest("read", null, Set.of(), Limits.DEFAULTS);

        ExecutionOutcome first = executor.execute(request);
        clock.advance(Duration.ofSeconds(10));
        ExecutionOutcome hit = executor.execute(request);
        ExecutionOutcome fresh = executor.execute(request.withFreshness(Freshness.NO_CACHE));

        assertThat(first.storedAt()).isEqualTo(clock.instant().minusSeconds(10));
        assertThat(hit.status()).isEqualTo(CacheStatus.HIT);
        assertThat(hit.storedAt()).isEqualTo(first.storedAt());
        assertThat(hit.expiresAt()).isEqualTo(first.expiresAt());
        assertThat(fresh.status()).isEqualTo(CacheStatus.MISS);
        assertThat(fresh.storedAt()).isEqualTo(clock.instant());
        assertThat(asked).containsExactly(Freshness.ANY, Freshness.NO_CACHE);
    }

    /** Code tools answering {@code fs.read} with the current text, stored or not as {@code stored} says. */
    private CodeTools reads(AtomicReference<String> text, boolean stored, AtomicInteger asked) {
        return new CodeTools() {
            @Override
            public Map<String, List<String>> reachable() {
                return Map.of("fs", List.of("read"));
            }

            @Override
            public CodeToolCall call(String server, String name, String argumentsJson) {
                return call(server, name, argumentsJson, null, Freshness.ANY);
            }

            @Override
            public CodeToolCall call(String server, String name, String argumentsJson, String agent,
                    Freshness freshness) {
                asked.incrementAndGet();
                ToolResult answer = ToolResult.ok("\"" + text.get() + "\"");
                ToolCallOutcome outcome = stored
                        ? new ToolCallOutcome(answer, CacheStatus.MISS, clock.instant().plusSeconds(300), clock.instant(), null)
                        : ToolCallOutcome.notCached(answer, CacheStatus.BYPASS, "a local server's read: asked every time");
                return new CodeToolCall("fs__read", "1", outcome, true, answer.json().length(), Map.of());
            }
        };
    }

    /** A run that returns what its one read answered. */
    private final Sandbox echoRead = (request, runTools) -> {
        CodeToolCall read = runTools.call("fs", "read", "{}");
        return ExecutionResult.success(read.answer().json(), "", Duration.ofMillis(50));
    };

    @Test
    void aRunWhoseAnswerWasNotStoredIsNeverAHitItsNextRequestAsksTheCallAgain() {
        AtomicReference<String> text = new AtomicReference<>("old");
        AtomicInteger asked = new AtomicInteger();
        AtomicInteger ran = new AtomicInteger();
        Sandbox counting = (request, runTools) -> {
            ran.incrementAndGet();
            return echoRead.execute(request, runTools);
        };
        CachedExecutor executor = CachedExecutor.builder(counting, store).toolVersions(versions).clock(clock)
                .ticker(ticker).codeTools(reads(text, false, asked)).build();
        ExecutionRequest request = new ExecutionRequest("read", null, Set.of(), Limits.DEFAULTS);

        ExecutionOutcome first = executor.execute(request);
        ExecutionOutcome same = executor.execute(request);
        text.set("new");
        ExecutionOutcome changed = executor.execute(request);

        assertThat(first.status()).isEqualTo(CacheStatus.MISS);
        assertThat(first.expiresAt()).isNull();
        assertThat(first.notStoredBecause()).contains("the answer of fs__read it used was not stored");
        assertThat(same.status()).isEqualTo(CacheStatus.REVALIDATED);
        assertThat(same.result().value()).isEqualTo("\"old\"");
        assertThat(same.expiresAt()).isNull();
        assertThat(changed.status()).isEqualTo(CacheStatus.MISS);
        assertThat(changed.result().value()).isEqualTo("\"new\"");
        assertThat(asked).hasValue(3);
        assertThat(ran).hasValue(2);
        assertThat(executor.execute(request).status()).isEqualTo(CacheStatus.REVALIDATED);
        assertThat(store.counters().totals()).containsEntry(Counter.UNCACHEABLE_TOOL_ANSWER_NOT_STORED, 4L)
                .doesNotContainKey(Counter.HITS);
    }

    @Test
    void aRunWhoseAnswersWereStoredIsAHitUntilTheyExpire() {
        AtomicReference<String> text = new AtomicReference<>("old");
        AtomicInteger asked = new AtomicInteger();
        CachedExecutor executor = CachedExecutor.builder(echoRead, store).toolVersions(versions).clock(clock)
                .ticker(ticker).codeTools(reads(text, true, asked)).build();
        ExecutionRequest request = new ExecutionRequest("read", null, Set.of(), Limits.DEFAULTS);

        ExecutionOutcome first = executor.execute(request);
        ExecutionOutcome hit = executor.execute(request);

        assertThat(first.expiresAt()).isEqualTo(clock.instant().plusSeconds(300));
        assertThat(hit.status()).isEqualTo(CacheStatus.HIT);
        assertThat(asked).hasValue(1);
    }
}
