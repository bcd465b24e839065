package dev.execache.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.execache.core.spi.Counter;
import dev.execache.core.spi.ToolCallCancelledException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class CachedToolTest {
    private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final SimpleStore store = new SimpleStore(clock);
    private final AtomicInteger calls = new AtomicInteger();
    private final MutableToolVersions versions = new MutableToolVersions(Map.of("read", "1"));
    private final List<String> events = new ArrayList<>();

    private final ToolInvoker tools = (tool, args) -> {
        calls.incrementAndGet();
        if (args.containsKey("fail")) {
            return ToolResult.error("{\"error\":\"no such file\"}");
        }
        return ToolResult.ok("{\"tool\":\"" + tool + "\",\"call\":" + calls.get() + "}");
    };

    private CachedTool.Builder builder() {
        return CachedTool.builder(tools, store).clock(clock).toolVersions(versions).listener(new CacheListener() {
            @Override
            public void onHit(String tool, String key) {
                events.add("hit " + tool);
            }

            @Override
            public void onMiss(String tool, String key) {
                events.add("miss " + tool);
            }

            @Override
            public void onEviction(String tool, String key) {
                events.add("evict " + tool);
            }

            @Override
            public void onInvalidation(String tool, int removed) {
                events.add("invalidate " + tool + " " + removed);
            }
        });
    }

    @Test
    void aReadWhoseServersWriteGenerationCannotBeReadIsAnsweredButNotStored() {
        SwitchableStore failing = new SwitchableStore(store);
        CachedTool cached = CachedTool.builder(tools, failing).clock(clock).toolVersions(versions).build();
        failing.failWriteGenerations(true);

        ToolCallOutcome unknown = cached.call(ToolCallRequest.of("read", Map.of("path", "a")).readOf("fs"));
        boolean counted = cached.advanceWriteGeneration("fs");
        failing.failWriteGenerations(false);

        assertThat(unknown.result().isError()).isFalse();
        assertThat(unknown.expiresAt()).as("not stored").isNull();
        assertThat(counted).isFalse();
        assertThat(cached.call(ToolCallRequest.of("read", Map.of("path", "a")).readOf("fs")).status()).isEqualTo(CacheStatus.MISS);
        assertThat(cached.call(ToolCallRequest.of("read", Map.of("path", "a")).readOf("fs")).status()).isEqualTo(CacheStatus.HIT);
        assertThat(calls).hasValue(2);
    }

    @Test
    void aPersonsAnswerIsKeptForThemAloneAndNeverServedToAnotherOrToNobody() {
        CachedTool cached = builder().build();
        ToolCallRequest read = ToolCallRequest.of("read", Map.of("path", "a"));

        ToolCallOutcome alice = cached.call(read.forPerson("alice"));
        ToolCallOutcome bob = cached.call(read.forPerson("bob"));
        ToolCallOutcome nobody = cached.call(read);
        ToolCallOutcome aliceAgain = cached.call(read.forPerson("alice"));
        ToolCallOutcome bobAgain = cached.call(read.withAgent("another agent").forPerson("bob"));

        assertThat(List.of(alice.status(), bob.status(), nobody.status())).containsOnly(CacheStatus.MISS);
        assertThat(aliceAgain.status()).isEqualTo(CacheStatus.HIT);
        assertThat(aliceAgain.result().json()).isEqualTo(alice.result().json());
        assertThat(bobAgain.status()).isEqualTo(CacheStatus.HIT);
        assertThat(bobAgain.result().json()).isEqualTo(bob.result().json());
        assertThat(calls).hasValue(3);
        assertThatThrownBy(() -> read.forPerson(" ")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("person must not be blank");
    }

    @Test
    void aPersonsAnswerGoesWithItsToolsNewVersionAsEveryAnswerDoes() {
        CachedTool cached = builder().build();
        ToolCallRequest read = ToolCallRequest.of("read", Map.of("path", "a")).forPerson("alice");
        cached.call(read);

        versions.set("read", "2");

        assertThat(cached.call(read).status()).isEqualTo(CacheStatus.MISS);
        assertThat(calls).hasValue(2);
    }

    @Test
    void aHitOfAReadDoesNotAskForItsServersWriteGeneration() {
        SwitchableStore failing = new SwitchableStore(store);
        CachedTool cached = CachedTool.builder(tools, failing).clock(clock).toolVersions(versions).build();
        cached.call(ToolCallRequest.of("read", Map.of("path", "a")).readOf("fs"));
        failing.failWriteGenerations(true);

        assertThat(cached.call(ToolCallRequest.of("read", Map.of("path", "a")).readOf("fs")).status()).isEqualTo(CacheStatus.HIT);
    }

    @Test
    void anAnswerIsKeptNoLongerThanItsServerAllowsEvenUnderALongerRule() {
        ToolInvoker bounded = (tool, args) -> {
            calls.incrementAndGet();
            ToolResult answer = ToolResult.ok("{\"call\":" + calls.get() + "}");
            return args.containsKey("bound") ? answer.withMaxAge(Duration.ofSeconds(30)) : answer;
        };
        CachedTool cached = CachedTool.builder(bounded, store).clock(clock).toolVersions(versions)
                .rule(ToolCacheRule.cache("read", Duration.ofMinutes(5), 10)).build();

        ToolCallOutcome first = cached.call(ToolCallRequest.of("read", Map.of("bound", true)));
        ToolCallOutcome unbounded = cached.call(ToolCallRequest.of("read", Map.of()));
        clock.advance(Duration.ofSeconds(29));
        ToolCallOutcome stillFresh = cached.call(ToolCallRequest.of("read", Map.of("bound", true)));
        clock.advance(Duration.ofSeconds(1));
        ToolCallOutcome expired = cached.call(ToolCallRequest.of("read", Map.of("bound", true)));

        assertThat(first.expiresAt()).isEqualTo(first.storedAt().plusSeconds(30));
        assertThat(unbounded.expiresAt()).isEqualTo(unbounded.storedAt().plus(Duration.ofMinutes(5)));
        assertThat(stillFresh.status()).isEqualTo(CacheStatus.HIT);
        assertThat(expired.status()).isEqualTo(CacheStatus.MISS);
        assertThat(calls).hasValue(3);
    }

    @Test
    void oneCallsAnswerIsRemovedAndCountedByItsCauseTheOthersStay() {
        CachedTool cached = builder().build();
        cached.call(ToolCallRequest.of("read", Map.of("path", "a")));
        cached.call(ToolCallRequest.of("read", Map.of("path", "b")));

        boolean removed = cached.policy().remove("read", Map.of("path", "a"), RemovalCause.RESOURCE);
        boolean again = cached.policy().remove("read", Map.of("path", "a"), RemovalCause.RESOURCE);

        assertThat(removed).isTrue();
        assertThat(again).isFalse();
        assertThat(cached.call(ToolCallRequest.of("read", Map.of("path", "a"))).status()).isEqualTo(CacheStatus.MISS);
        assertThat(cached.call(ToolCallRequest.of("read", Map.of("path", "b"))).status()).isEqualTo(CacheStatus.HIT);
        assertThat(store.counters().totals()).containsEntry(Counter.INVALIDATED_BY_RESOURCE, 1L)
                .containsEntry(Counter.INVALIDATIONS, 1L);
    }

    @Test
    void aMaxAgeMustBePositive() {
        assertThatThrownBy(() -> ToolResult.ok("{}").withMaxAge(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxAge must be positive");
    }

    @Test
    void readOnlyToolIsCachedWithArgumentsInAnyOrder() {
        CachedTool cached = builder().build();

        ToolResult first = cached.call(ToolCallRequest.of("read", Map.of("path", "a", "lines", 10))).result();
        ToolResult second = cached.call(ToolCallRequest.of("read", Map.of("lines", 10.0, "path", "a"))).result();

        assertThat(second).isEqualTo(first);
        assertThat(calls).hasValue(1);
        assertThat(events).containsExactly("miss read", "hit read");
    }

    @Test
    void mutatingToolsAreNeverCachedByDefault() {
        CachedTool cached = builder().build();

        for (String tool : List.of("write_file", "edit", "bash", "jira_create_issue", "db_update", "delete", "mcp__k8s__deploy")) {
            cached.call(ToolCallRequest.of(tool, Map.of("x", 1))).result();
            cached.call(ToolCallRequest.of(tool, Map.of("x", 1))).result();
            assertThat(cached.policy().isCached(tool)).as(tool).isFalse();
            assertThat(cached.policy().stats().get(tool).uncacheable()).as(tool).isEqualTo(2);
        }
        assertThat(calls).hasValue(14);
        assertThat(store.counters().totals()).containsEntry(Counter.UNCACHEABLE_MUTATING_TOOL, 14L).doesNotContainKey(Counter.MISSES);
    }

    @Test
    void aGatewayToolIsJudgedByItsOwnNameNotByItsServersName() {
        CachedTool cached = builder().build();

        for (String tool : List.of("deployments__list_runs", "writer__read_file", "updates__latest")) {
            cached.call(ToolCallRequest.of(tool, Map.of("x", 1))).result();
            cached.call(ToolCallRequest.of(tool, Map.of("x", 1))).result();
            assertThat(cached.policy().isCached(tool)).as(tool).isTrue();
        }
        cached.call(ToolCallRequest.of("reader__write_file", Map.of("x", 1))).result();
        assertThat(cached.policy().isCached("reader__write_file")).isFalse();
        assertThat(calls).hasValue(4);
    }

    @Test
    void callsOfAToolARuleTurnsOffAreCountedAsBypassed() {
        CachedTool cached = builder().rule(ToolCacheRule.never("live_*")).build();

        cached.call(ToolCallRequest.of("live_prices", Map.of())).result();

        assertThat(cached.policy().stats().get("live_prices").bypassed()).isEqualTo(1);
        assertThat(cached.policy().stats().get("live_prices").uncacheable()).isZero();
    }

    @Test
    void onlyARuleNamingAMutatingToolExactlyCachesIt() {
        CachedTool cached = builder()
                .rule(ToolCacheRule.cache("bash", Duration.ofMinutes(1), 10))
                .rule(ToolCacheRule.cache("*", Duration.ofMinutes(1), 10))
                .build();

        assertThat(cached.policy().isCached("bash")).isTrue();
        assertThat(cached.policy().isCached("write_file")).isFalse();
        assertThat(cached.policy().isCached("read")).isTrue();
    }

    @Test
    void rulesAreChosenByGlobFirstMatchWins() {
        CachedTool cached = builder()
                .rule(ToolCacheRule.never("mcp__*__query_live"))
                .rule(ToolCacheRule.cache("mcp__*__query_*", Duration.ofSeconds(30), 10))
                .build();

        assertThat(cached.policy().isCached("mcp__db__query_live")).isFalse();
        assertThat(cached.policy().isCached("mcp__db__query_users")).isTrue();

        cached.call(ToolCallRequest.of("mcp__db__query_users", Map.of())).result();
        clock.advance(Duration.ofSeconds(30));
        cached.call(ToolCallRequest.of("mcp__db__query_users", Map.of())).result();
        assertThat(calls).as("the rule's TTL applies").hasValue(2);
    }

    @Test
    void defaultRuleCanTurnCachingOff() {
        CachedTool cached = builder().defaultRule(false, Duration.ofMinutes(1), 10).build();

        cached.call(ToolCallRequest.of("read", Map.of())).result();
        cached.call(ToolCallRequest.of("read", Map.of())).result();

        assertThat(calls).hasValue(2);
    }

    @Test
    void failedCallsAreNeverCached() {
        CachedTool cached = builder().build();

        cached.call(ToolCallRequest.of("read", Map.of("fail", true))).result();
        ToolResult again = cached.call(ToolCallRequest.of("read", Map.of("fail", true))).result();

        assertThat(again.isError()).isTrue();
        assertThat(calls).hasValue(2);
    }

    @Test
    void ruleBoundEvictsTheLeastRecentlyUsedCall() {
        CachedTool cached = builder().rule(ToolCacheRule.cache("read", Duration.ofMinutes(5), 2)).build();
        cached.call(ToolCallRequest.of("read", Map.of("path", "a"))).result();
        cached.call(ToolCallRequest.of("read", Map.of("path", "b"))).result();
        cached.call(ToolCallRequest.of("read", Map.of("path", "a"))).result();

        cached.call(ToolCallRequest.of("read", Map.of("path", "c"))).result();

        assertThat(events).contains("evict read");
        assertThat(cached.policy().inspect("read", Map.of("path", "b"))).isEmpty();
        assertThat(cached.policy().inspect("read", Map.of("path", "a"))).isPresent();
        assertThat(cached.policy().inspect("read", Map.of("path", "c"))).isPresent();
    }

    @Test
    void ruleBoundIsKeptByTheStoreAndExactAfterClearAndInvalidation() {
        CachedTool cached = builder().rule(ToolCacheRule.cache("read", Duration.ofMinutes(5), 2)).build();
        cached.call(ToolCallRequest.of("read", Map.of("path", "a"))).result();
        cached.call(ToolCallRequest.of("read", Map.of("path", "b"))).result();
        cached.policy().clear("read");
        cached.call(ToolCallRequest.of("read", Map.of("path", "c"))).result();
        cached.call(ToolCallRequest.of("read", Map.of("path", "d"))).result();
        assertThat(events).as("c and d fill the bound a and b left").doesNotContain("evict read");

        versions.set("read", "2");
        cached.call(ToolCallRequest.of("read", Map.of("path", "e"))).result();
        cached.call(ToolCallRequest.of("read", Map.of("path", "f"))).result();
        assertThat(events).as("invalidation emptied the rule too").doesNotContain("evict read");

        cached.call(ToolCallRequest.of("read", Map.of("path", "g"))).result();
        assertThat(events).containsOnlyOnce("evict read");
        assertThat(cached.policy().inspect("read", Map.of("path", "e"))).isEmpty();
        assertThat(store.counters().totals()).containsEntry(Counter.EVICTIONS, 1L);
    }

    @Test
    void aToolsExceptionReachesTheCallerAndNothingIsStored() {
        CachedTool cached = CachedTool.builder((tool, args) -> {
            calls.incrementAndGet();
            throw new IllegalStateException("server gone");
        }, store).build();

        assertThatThrownBy(() -> cached.call(ToolCallRequest.of("read", Map.of())).result()).hasMessage("server gone");
        assertThatThrownBy(() -> cached.call(ToolCallRequest.of("read", Map.of())).result()).hasMessage("server gone");
        assertThat(calls).hasValue(2);
        assertThat(store.size()).isZero();
    }

    @Test
    void clearRemovesTheCallsOfToolsMatchingAGlob() {
        CachedTool cached = builder().build();
        cached.call(ToolCallRequest.of("read", Map.of("path", "a"))).result();
        cached.call(ToolCallRequest.of("read_dir", Map.of("path", "a"))).result();
        cached.call(ToolCallRequest.of("query", Map.of("sql", "select 1"))).result();

        assertThat(cached.policy().clear("read*")).isEqualTo(2);

        assertThat(cached.policy().inspect("query", Map.of("sql", "select 1"))).isPresent();
        assertThat(cached.policy().inspect("read", Map.of("path", "a"))).isEmpty();
    }

    @Test
    void inspectShowsAgeTtlLeftAndHits() {
        CachedTool cached = builder().build();
        cached.call(ToolCallRequest.of("read", Map.of("path", "a"))).result();
        cached.call(ToolCallRequest.of("read", Map.of("path", "a"))).result();
        clock.advance(Duration.ofSeconds(40));

        ToolCallInfo info = cached.policy().inspect("read", Map.of("path", "a")).orElseThrow();

        assertThat(info.age()).isEqualTo(Duration.ofSeconds(40));
        assertThat(info.ttlLeft()).isEqualTo(CachePolicy.DEFAULT_TTL.minusSeconds(40));
        assertThat(info.hits()).isEqualTo(1);
        assertThat(info.toolVersions()).isEqualTo(Map.of("read", "1"));
        assertThat(info.key()).startsWith("v1:read:");
    }

    @Test
    void toolVersionChangeRemovesThatToolsCalls() {
        CachedTool cached = builder().build();
        cached.call(ToolCallRequest.of("read", Map.of("path", "a"))).result();

        versions.set("read", "2");

        assertThat(events).contains("invalidate read 1");
        cached.call(ToolCallRequest.of("read", Map.of("path", "a"))).result();
        assertThat(calls).hasValue(2);
    }

    @Test
    void keyGeneratorIsPluggable() {
        ToolCallKeyGenerator byPathOnly = new ToolCallKeyGenerator() {
            @Override
            public String key(String tool, String canonicalArgs, String toolVersion) {
                return "custom:" + tool + ":" + canonicalArgs.replaceAll("\"nonce\":\\d+,?", "");
            }

            @Override
            public String pattern(String toolGlob) {
                return "custom:" + toolGlob + ":*";
            }
        };
        CachedTool cached = builder().keyGenerator(byPathOnly).build();

        cached.call(ToolCallRequest.of("read", Map.of("path", "a", "nonce", 1))).result();
        cached.call(ToolCallRequest.of("read", Map.of("path", "a", "nonce", 2))).result();

        assertThat(calls).hasValue(1);
        assertThat(cached.policy().clear("read")).isEqualTo(1);
    }

    @Test
    void statsArePerToolAndComeFromTheStore() {
        MutableTicker ticker = new MutableTicker();
        ToolInvoker slow = (tool, args) -> {
            ticker.advance(Duration.ofMillis(30));
            return ToolResult.ok("{}");
        };
        CachedTool cached = CachedTool.builder(slow, store).clock(clock).ticker(ticker).build();
        cached.call(ToolCallRequest.of("read", Map.of())).result();
        cached.call(ToolCallRequest.of("read", Map.of())).result();
        cached.call(ToolCallRequest.of("query", Map.of())).result();

        assertThat(cached.policy().stats())
                .containsEntry("read", new ToolStats(1, 1, Duration.ofMillis(30), 0, 0, 0, 0, 0))
                .containsEntry("query", new ToolStats(0, 1, Duration.ZERO, 0, 0, 0, 0, 0));
        CachedTool another = CachedTool.builder(slow, store).build();
        assertThat(another.policy().stats()).as("another user of the store sees the same figures").isEqualTo(cached.policy().stats());
    }

    @Test
    void duplicateRuleIsRejectedWhenBuilding() {
        assertThatThrownBy(() -> builder()
                .rule(ToolCacheRule.cache("read", Duration.ofMinutes(1), 10))
                .rule(ToolCacheRule.never("read")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("a rule for 'read' was already added");
        assertThatThrownBy(() -> ToolCacheRule.cache("read", Duration.ZERO, 10))
                .hasMessageContaining("ttl must be positive (rule read)");
    }
    @Test
    void aCallCancelledWhileItWaitsForAnIdenticalCallInFlightSaysItNeverReachedTheTool() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CachedTool cached = CachedTool.builder((tool, args) -> {
            entered.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return ToolResult.ok("{\"slow\":true}");
        }, store).clock(clock).toolVersions(versions).build();
        CompletableFuture<ToolResult> leader =
                CompletableFuture.supplyAsync(() -> cached.call(ToolCallRequest.of("read", Map.of("path", "a"))).result());
        entered.await();
        CompletableFuture<Throwable> waiter = new CompletableFuture<>();
        Thread follower = new Thread(() -> {
            try {
                cached.call(ToolCallRequest.of("read", Map.of("path", "a"))).result();
                waiter.complete(null);
            } catch (RuntimeException e) {
                waiter.complete(e);
            }
        });
        follower.start();
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(1))
                .until(() -> follower.getState() == Thread.State.WAITING);
        follower.interrupt();

        Throwable thrown = waiter.get();
        release.countDown();

        assertThat(thrown).isInstanceOf(ToolCallCancelledException.class);
        assertThat(((ToolCallCancelledException) thrown).reachedTool()).isFalse();
        assertThat(leader.get().json()).isEqualTo("{\"slow\":true}");
    }

    @Test
    void anIdenticalCallThatWaitedForOneWhoseAnswerWasItsAgentsAsksTheToolItself() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger asked = new AtomicInteger();
        CachedTool cached = CachedTool.builder((tool, args) -> {
            int n = asked.incrementAndGet();
            if (n == 1) {
                entered.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            // the server asked its caller's agent, whose answer is in the result
            return ToolResult.ok("{\"answer\":" + n + "}").withHint(CacheHint.AGENT_ANSWERED);
        }, store).clock(clock).toolVersions(versions).build();
        ToolCallRequest read = ToolCallRequest.of("read", Map.of("path", "a"));
        CompletableFuture<ToolCallOutcome> leader = CompletableFuture.supplyAsync(() -> cached.call(read));
        entered.await();
        CompletableFuture<ToolCallOutcome> waiter = new CompletableFuture<>();
        Thread follower = new Thread(() -> waiter.complete(cached.call(read)));
        follower.start();
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(1))
                .until(() -> follower.getState() == Thread.State.WAITING);

        release.countDown();

        assertThat(leader.get().result().json()).isEqualTo("{\"answer\":1}");
        assertThat(waiter.get().status()).isEqualTo(CacheStatus.MISS);
        assertThat(waiter.get().result().json()).isEqualTo("{\"answer\":2}");
        assertThat(asked).hasValue(2);
    }

    @Test
    void aCallTheCallerKeepsUncachedAsksTheToolEachTimeAndIsCountedAsItSays() {
        CachedTool cached = builder().build();
        ToolCallRequest read = ToolCallRequest.of("read", Map.of("path", "a")).withAgent("claude code");

        ToolCallOutcome turnedOff = cached.call(read.uncached(false));
        ToolCallOutcome again = cached.call(read.uncached(new ToolCallRequest.Uncached(true, "the rule says it writes")));

        assertThat(turnedOff.status()).isEqualTo(CacheStatus.BYPASS);
        assertThat(turnedOff.notCachedBecause()).isEqualTo("caching is turned off for it");
        assertThat(again.notCachedBecause()).isEqualTo("the rule says it writes");
        assertThat(calls).hasValue(2);
        assertThat(cached.policy().stats().get("read").bypassed()).isEqualTo(1);
        assertThat(cached.policy().stats().get("read").uncacheable()).isEqualTo(1);
        assertThat(cached.call(ToolCallRequest.of("read", Map.of("path", "a"))).status()).isEqualTo(CacheStatus.MISS);
    }

    @Test
    void aRequestNamesWhatIsWrongWithIt() {
        assertThatThrownBy(() -> ToolCallRequest.of(" ", Map.of())).hasMessage("tool name must not be blank");
        assertThatThrownBy(() -> ToolCallRequest.of("read", Map.of()).withFreshness(null))
                .hasMessage("freshness must not be null");
        assertThatThrownBy(() -> new ToolCallRequest("read", Map.of(), java.util.Optional.empty(),
                java.util.OptionalLong.of(3), null, Freshness.ANY, java.util.Optional.empty()))
                .hasMessageContaining("seenGeneration is given for no server");
        ToolCallRequest request = ToolCallRequest.of("read", null).withAgent("claude code").readOf("fs", 7);
        assertThat(request.arguments()).isEmpty();
        assertThat(request.agent()).isEqualTo("claude-code");
        assertThat(request.server()).contains("fs");
        assertThat(request.seenGeneration()).hasValue(7);
        assertThat(request.uncached()).isEmpty();
    }
}
