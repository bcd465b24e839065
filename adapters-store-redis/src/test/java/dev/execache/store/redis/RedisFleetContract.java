package dev.execache.store.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.execache.core.CachedTool;
import dev.execache.core.ToolCallRequest;
import dev.execache.core.MutableClock;
import dev.execache.core.ToolInvoker;
import dev.execache.core.ToolResult;
import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.CacheStore;
import dev.execache.core.spi.Counter;
import dev.execache.core.spi.FlightLease;
import dev.execache.core.spi.StoreCounters;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;

/**
 * The fleet's rules on one Redis set-up: two instances, each with a client of its own connected
 * by the set-up's URL ({@code redis://}, {@code redis-cluster://}, {@code redis-sentinel://}),
 * are one cache: what one does, the other sees, and a key has one flight across both. Each
 * subclass starts its set-up once for the class; every test has a namespace of its own, so the
 * tests of a class run at once (most of their time is spent waiting out a flight lease). The
 * mode is set per test, not on the class: a class marked concurrent would also run at the same
 * time as other classes, which share the standalone server and may reconfigure it.
 */
abstract class RedisFleetContract {
    private static final Duration TTL = Duration.ofMinutes(5);

    private final MutableClock clock = new MutableClock(Instant.now());
    private final String prefix = TestRedis.freshPrefix();
    private final List<RedisCacheStore> stores = new ArrayList<>();
    private final ExecutorService other = Executors.newSingleThreadExecutor();
    private RedisCacheStore first;
    private RedisCacheStore second;

    /** The URL every instance is configured with. */
    protected abstract String url();

    /** A client the subclass keeps for the class, to look at and delete what the stores wrote. */
    protected abstract RedissonClient admin();

    /**
     * The key's time to live in milliseconds (-1 for none) on each master that holds it, asked of
     * the masters themselves: empty if no master has the key.
     */
    protected abstract List<Long> millisLeftOnMasters(String key) throws IOException;

    @BeforeEach
    void startTwoInstances() {
        first = instance();
        second = instance();
    }

    @AfterEach
    void cleanUp() {
        other.shutdownNow();
        stores.forEach(RedisCacheStore::close);
        admin().getKeys().deleteByPattern(KeyLayout.of(prefix).pattern());
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void entriesCountersAndVersionsAreSharedByTheFleet() {
        Instant now = clock.instant();
        first.put(new CacheEntry("v1:a", "1", "", Duration.ofSeconds(2), Map.of("github", "v1"), now, now.plus(TTL), 0));
        first.counters().increment(Counter.MISSES, 1);
        first.recordVersions(CacheStore.DEFAULT_SCOPE, Map.of("github", "v1"));

        assertThat(second.get("v1:a")).map(CacheEntry::value).contains("1");
        second.counters().increment(Counter.HITS, 1);

        assertThat(first.peek("v1:a")).map(CacheEntry::hits).contains(1L);
        assertThat(first.counters().totals()).containsEntry(Counter.HITS, 1L).containsEntry(Counter.MISSES, 1L);
        assertThat(second.lastSeenVersions(CacheStore.DEFAULT_SCOPE)).isEqualTo(Map.of("github", "v1"));
        assertThat(second.removeByTool("github")).isEqualTo(1);
        assertThat(first.peek("v1:a")).isEmpty();
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void aSessionOpenedByOneInstanceIsKnownToTheOtherAndItsEndToo() {
        Duration idle = Duration.ofMinutes(30);
        first.sessions().open("s1", "owner-a", idle);

        assertThat(second.sessions().use("s1", idle)).contains("owner-a");
        assertThat(second.sessions().end("s1")).isTrue();
        assertThat(first.sessions().use("s1", idle)).isEmpty();
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void twoInstancesCountingNewAgentsAtOnceNeverCountMoreThanTheCapByName() throws Exception {
        int each = StoreCounters.MAX_AGENTS;
        Future<?> counting = other.submit(() -> {
            for (int i = 0; i < each; i++) {
                second.counters().increment(null, "second-" + i, Map.of(Counter.HITS, 1L));
            }
        });
        for (int i = 0; i < each; i++) {
            first.counters().increment(null, "first-" + i, Map.of(Counter.HITS, 1L));
        }
        counting.get(30, TimeUnit.SECONDS);

        Map<String, Map<Counter, Long>> perAgent = first.counters().perAgent();
        assertThat(perAgent).hasSize(StoreCounters.MAX_AGENTS + 1);
        long counted = perAgent.values().stream().mapToLong(counters -> counters.get(Counter.HITS)).sum();
        assertThat(counted).isEqualTo(2L * each);
        assertThat(perAgent.get(StoreCounters.OTHER_AGENT).get(Counter.HITS)).isEqualTo((long) each);
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void aToolCallMadeOnTwoInstancesAtOnceCallsTheToolOnceInTheFleet() throws Exception {
        AtomicInteger toolCalls = new AtomicInteger();
        AtomicReference<Thread> secondCaller = new AtomicReference<>();
        ToolInvoker slowRead = (tool, args) -> {
            toolCalls.incrementAndGet();
            awaitWaitingOnTheFlight(secondCaller);
            return ToolResult.ok("{\"text\":\"hello\"}");
        };
        ToolInvoker neverCalled = (tool, args) -> {
            toolCalls.incrementAndGet();
            return ToolResult.ok("{\"text\":\"second\"}");
        };
        CachedTool onFirst = CachedTool.builder(slowRead, first).clock(clock).build();
        CachedTool onSecond = CachedTool.builder(neverCalled, second).clock(clock).build();

        CompletableFuture<ToolResult> firstCall = CompletableFuture.supplyAsync(() -> onFirst.call(ToolCallRequest.of("read", Map.of("path", "a"))).result());
        awaitHeld(toolCalls);
        CompletableFuture<ToolResult> secondCall = CompletableFuture.supplyAsync(() -> {
            secondCaller.set(Thread.currentThread());
            return onSecond.call(ToolCallRequest.of("read", Map.of("path", "a"))).result();
        }, other);

        assertThat(firstCall.get(30, TimeUnit.SECONDS).json()).isEqualTo("{\"text\":\"hello\"}");
        assertThat(secondCall.get(30, TimeUnit.SECONDS).json()).as("the second waited and got the first's answer")
                .isEqualTo("{\"text\":\"hello\"}");
        assertThat(toolCalls).hasValue(1);
        assertThat(onSecond.policy().stats().get("read")).as("counted fleet-wide, per tool")
                .satisfies(read -> {
                    assertThat(read.hits()).isEqualTo(1);
                    assertThat(read.misses()).isEqualTo(1);
                });
    }

    private static void awaitHeld(AtomicInteger toolCalls) {
        await().alias("the first call's tool runs").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(5))
                .until(() -> toolCalls.get() > 0);
    }

    /** Until the second caller waits for the fleet's flight (inside Redisson's tryLock). */
    private static void awaitWaitingOnTheFlight(AtomicReference<Thread> caller) {
        await().alias("the second instance waits for the flight").atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(5)).until(() -> {
                    Thread thread = caller.get();
                    return thread != null && Arrays.stream(thread.getStackTrace())
                            .anyMatch(frame -> frame.getMethodName().equals("acquireFlight"))
                            && thread.getState() != Thread.State.RUNNABLE;
                });
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void theSecondInstanceWaitsUntilTheFirstClosesItsLease() throws Exception {
        FlightLease held = first.acquireFlight("v1:x", Duration.ofSeconds(30));
        CompletableFuture<FlightLease> waiting = acquireElsewhere(second, "v1:x", Duration.ofSeconds(30));

        assertThatThrownBy(() -> waiting.get(500, TimeUnit.MILLISECONDS)).as("waits while the first holds the flight")
                .isInstanceOf(TimeoutException.class);
        held.close();

        FlightLease next = waiting.get(10, TimeUnit.SECONDS);
        assertThat(next).as("a fleet lease, not a local fallback").isNotSameAs(FlightLease.LOCAL);
        next.close();
        assertThat(first.acquireFlight("v1:x", Duration.ofMillis(300))).as("closed from another thread than it was taken on")
                .isNotSameAs(FlightLease.LOCAL);
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void aLeaseThatLapsedDoesNotReleaseTheNextHoldersFlight() throws Exception {
        FlightLease lapsed = first.acquireFlight("v1:x", Duration.ofSeconds(30));
        deleteFlightKey("v1:x");
        FlightLease next = acquireElsewhere(second, "v1:x", Duration.ofSeconds(30)).get(30, TimeUnit.SECONDS);
        assertThat(next).isNotSameAs(FlightLease.LOCAL);

        lapsed.close();
        lapsed.close();

        assertThat(flightMillisLeft("v1:x")).as("the next holder still has it").isPositive();
        next.close();
        assertThat(flightMillisLeft("v1:x")).as("released by its holder").isNegative();
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void aLiveHolderRenewsItsFlightForAsLongAsItRuns() throws Exception {
        FlightLease held = first.acquireFlight("v1:x", Duration.ofMillis(100));
        AtomicLong lowest = new AtomicLong(flightMillisLeft("v1:x"));
        await("the lease renewed").atMost(Duration.ofSeconds(60)).pollInSameThread().pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(20)).until(() -> {
                    long left = flightMillisLeft("v1:x");
                    assertThat(left).as("still held").isPositive();
                    return left > lowest.getAndAccumulate(left, Math::min) + 500;
                });
        held.close();
        assertThat(flightMillisLeft("v1:x")).as("released, no longer renewed").isNegative();
    }

    /**
     * The holder dies as a crashed process would: its client is shut down without a word to
     * Redis, so nothing renews or releases its flight, which the master still holds.
     */
    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void whenTheHolderDiesItsLeaseLapsesAndTheOtherProceeds() throws Exception {
        first.acquireFlight("v1:x", Duration.ofHours(1));
        assertThat(flightMillisLeft("v1:x")).as("a dead holder's flight lapses within the lease, whatever the run's bound")
                .isPositive().isLessThanOrEqualTo(RedisCacheStore.FLIGHT_LEASE.toMillis());
        first.close();

        FlightLease next = second.acquireFlight("v1:x", Duration.ofSeconds(20));

        assertThat(next).isNotSameAs(FlightLease.LOCAL);
        assertThat(flightMillisLeft("v1:x")).as("the next holder's flight, on one master").isPositive();
        next.close();
        assertThat(flightMillisLeft("v1:x")).as("released").isNegative();
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void aWaiterWithTheSameBoundOutlastsADeadHoldersLease() throws Exception {
        first.acquireFlight("v1:x", Duration.ofSeconds(1));
        first.close();

        FlightLease next = second.acquireFlight("v1:x", Duration.ofSeconds(1));

        assertThat(next).as("took over the lapsed flight rather than giving up").isNotSameAs(FlightLease.LOCAL);
        next.close();
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void waitingLongerThanMaxHoldFallsBackToALocalRun() throws Exception {
        FlightLease held = first.acquireFlight("v1:x", Duration.ofSeconds(30));

        FlightLease gaveUp = acquireElsewhere(second, "v1:x", Duration.ofMillis(300)).get(60, TimeUnit.SECONDS);

        assertThat(gaveUp).isSameAs(FlightLease.LOCAL);
        held.close();
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void flightsOfDifferentKeysDoNotWaitForEachOther() throws Exception {
        FlightLease x = first.acquireFlight("v1:x", Duration.ofSeconds(30));

        FlightLease y = acquireElsewhere(second, "v1:y", Duration.ofSeconds(30)).get(10, TimeUnit.SECONDS);

        assertThat(y).isNotSameAs(FlightLease.LOCAL);
        y.close();
        x.close();
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void aStoreOnTheApplicationsClientLeavesThatClientOpen() {
        RedissonClient shared = Redisson.create(RedissonConfig.of(RedisUrl.parse(url()), TestRedis.BEHAVIOUR_TIMEOUT));
        try {
            RedisCacheStore store = new RedisCacheStore(shared, prefix, 10, clock);
            store.counters().increment(Counter.HITS, 1);
            store.close();

            assertThat(shared.isShutdown()).isFalse();
            assertThat(first.counters().totals()).containsEntry(Counter.HITS, 1L);
        } finally {
            shared.shutdown();
        }
    }

    /** The flight lock's time to live in milliseconds, negative if there is none; it is on one master at most. */
    private long flightMillisLeft(String key) throws IOException {
        List<Long> left = millisLeftOnMasters(first.layout().flight(key));
        assertThat(left).as("the flight of %s is on one master", key).hasSizeLessThanOrEqualTo(1);
        return left.isEmpty() ? -2 : left.get(0);
    }

    private void deleteFlightKey(String key) {
        admin().getKeys().delete(first.layout().flight(key));
    }

    private CompletableFuture<FlightLease> acquireElsewhere(RedisCacheStore store, String key, Duration maxHold) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return store.acquireFlight(key, maxHold);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }, other);
    }

    /**
     * An instance as a fleet member makes it: its own client, built by the store from the URL
     * ({@link RedisCacheStore#config}) and shut down when the store closes. The budget is the
     * behaviour tests' own (see {@link TestRedis#BEHAVIOUR_TIMEOUT}): a timeout is not what is tested here.
     */
    private RedisCacheStore instance() {
        RedisCacheStore store = RedisCacheStore.connect(RedisStoreSettings.of(url()).withKeyPrefix(prefix)
                .withTimeout(TestRedis.BEHAVIOUR_TIMEOUT), clock);
        stores.add(store);
        return store;
    }
}
