package dev.execache.store.redis;


import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import dev.execache.core.CachedTool;
import dev.execache.core.StoreGuard;
import dev.execache.core.ToolCallRequest;
import dev.execache.core.MutableClock;
import dev.execache.core.ToolResult;
import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.Counter;
import java.net.ServerSocket;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.redisson.client.RedisException;

/** A redis-server of the test's own, killed and restarted on the same port. */
class RedisFaultTest {
    private final MutableClock clock = new MutableClock(Instant.now());

    @Test
    void whileRedisIsDownCallsFailFastAndAfterARestartTheSameStoreWorksAgain() throws Exception {
        try (RedisServerProcess server = RedisServerProcess.start();
                RedisCacheStore store = RedisCacheStore.connect(RedisStoreSettings.of(server.url()), clock)) {
            store.put(entry("v1:a"));
            assertThat(store.get("v1:a")).isPresent();

            server.kill();

            assertThatThrownBy(() -> store.get("v1:a")).isInstanceOf(RedisException.class);
            assertSkipped(() -> store.put(entry("v1:b")));
            assertSkipped(() -> store.counters().totals());
            assertSkipped(() -> store.acquireFlight("v1:a", Duration.ofSeconds(30)));

            server.restart();

            awaitWorking(store);
            store.put(entry("v1:c"));
            assertThat(store.get("v1:c")).isPresent();
            assertThat(store.get("v1:a")).as("a restarted server without persistence starts empty").isEmpty();
        }
    }

    @Test
    void aHungRedisTimesOutFastAndIsUsedAgainWhenItWakes() throws Exception {
        try (RedisServerProcess server = RedisServerProcess.start();
                RedisCacheStore store = RedisCacheStore.connect(RedisStoreSettings.of(server.url()), clock)) {
            store.put(entry("v1:a"));

            server.pause();
            try {
                assertThatThrownBy(() -> store.get("v1:a")).isInstanceOf(RedisException.class)
                        .hasMessageContaining("did not answer within");
                assertSkipped(() -> store.put(entry("v1:b")));
            } finally {
                server.resume();
            }

            awaitWorking(store);
            assertThat(store.get("v1:a")).isPresent();
        }
    }

    @Test
    void aPausedRedisCostsOneTimeoutPerOutageAndTheWarningsAreOneLine() throws Exception {
        try (RedisServerProcess server = RedisServerProcess.start();
                RedisCacheStore store = RedisCacheStore.connect(RedisStoreSettings.of(server.url()), clock)) {
            store.put(entry("v1:a"));

            // longer than the longest a stalled process waits (Budget.longest): the first call times out even on a loaded machine
            server.pauseClients(Budget.longest(RedisStoreSettings.DEFAULT_TIMEOUT).plusSeconds(2));
            List<String> failures = new ArrayList<>();
            for (Executable call : List.<Executable>of(() -> store.get("v1:a"), () -> store.put(entry("v1:b")),
                    () -> store.counters().totals(), () -> store.counters().increment(Counter.MISSES, 1),
                    () -> store.acquireFlight("v1:a", Duration.ofSeconds(30)))) {
                failures.add(catchThrowableOfType(RedisException.class, call::execute).getMessage());
            }

            assertThat(failures.get(0)).startsWith("Redis at " + RedisUrl.parse(server.url())
                    + " did not answer within " + RedisStoreSettings.DEFAULT_TIMEOUT.toMillis() + " ms");
            assertThat(failures.subList(1, failures.size())).as("not sent at all: skipped while the first one's outage lasts")
                    .allSatisfy(message -> assertThat(message).contains("skipped"));
            assertThat(failures).allSatisfy(message -> assertThat(message).doesNotContain("\n", "redis.call", "org.redisson"));

            awaitWorking(store);
            assertThat(store.get("v1:a")).isPresent();
        }
    }

    /**
     * The client connects on its first command: a process whose first command meets a hung
     * Redis (one that accepts connections and answers nothing, as under {@code CLIENT PAUSE})
     * waits one budget for it, not the hang. The hang lasts until the test ends it, far longer
     * than the client's own connect timeouts, so a caller that waited for the connection itself
     * would end with a connection error, not the budget's timeout.
     */
    @Test
    void aStoreOpenedWhileRedisHangsWaitsOneBudgetNotTheHang() throws Exception {
        try (RedisServerProcess server = RedisServerProcess.start()) {
            server.pause();
            try (RedisCacheStore store = RedisCacheStore.open(RedisStoreSettings.of(server.url()), clock)) {
                try {
                    assertThatThrownBy(() -> store.get("v1:a")).isInstanceOf(RedisException.class)
                            .hasMessageStartingWith("Redis at " + RedisUrl.parse(server.url()) + " did not answer within "
                                    + RedisStoreSettings.DEFAULT_TIMEOUT.toMillis() + " ms")
                            .cause().isInstanceOf(TimeoutException.class);
                    assertSkipped(() -> store.put(entry("v1:b")));
                } finally {
                    server.resume();
                }

                awaitWorking(store);
                store.put(entry("v1:c"));
                assertThat(store.get("v1:c")).isPresent();
            }
        }
    }

    /**
     * As under {@code serve}, two faces of the policy use one store (here two tool caches): a
     * killed Redis is one outage, said once as what it is, and its end once, counting the calls
     * it touched as calls and the failed store operations as operations; the counts of the calls
     * made meanwhile reach the store when it is back.
     */
    @Test
    void aKilledRedisIsOneOutageForEveryFaceDescribedAsUnreachableAndCountedInCalls() throws Exception {
        Logger logger = Logger.getLogger("dev.execache");
        List<LogRecord> lines = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override public void publish(LogRecord record) {
                if (record.getLevel().intValue() >= Level.INFO.intValue()) {
                    lines.add(record);
                }
            }
            @Override public void flush() { }
            @Override public void close() { }
        };
        try (RedisServerProcess server = RedisServerProcess.start();
                RedisCacheStore store = RedisCacheStore.connect(RedisStoreSettings.of(server.url()), clock)) {
            logger.addHandler(capture);
            // every face on the store is given its one guard, as serve's are
            StoreGuard guard = StoreGuard.of(store);
            CachedTool code = CachedTool.builder(
                    (tool, args) -> ToolResult.ok("1"), guard).clock(clock).build();
            CachedTool tools = CachedTool.builder(
                    (tool, args) -> ToolResult.ok("2"), guard).clock(clock).build();
            code.call(ToolCallRequest.of("read", Map.of("n", 0))).result();
            tools.call(ToolCallRequest.of("read", Map.of("n", 0))).result();

            server.kill();
            for (int n = 1; n <= 5; n++) {
                (n % 2 == 0 ? code : tools).call(ToolCallRequest.of("read", Map.of("n", n)));
            }
            server.restart();
            awaitWorking(store);
            code.call(ToolCallRequest.of("read", Map.of("n", 6))).result();

            // On a loaded machine the call's budget may lapse before the refused connection is seen:
            // then the one outage is told as slow, which it also was; never as refusing writes.
            assertThat(lines).filteredOn(line -> line.getLevel() == Level.WARNING).hasSize(1)
                    .first().satisfies(line -> assertThat(line.getMessage())
                            .matches("(?s)cache store (cannot be reached|did not answer in time).*")
                            .contains("Redis at " + RedisUrl.parse(server.url())).doesNotContain("refuses writes", "\n"));
            assertThat(lines).filteredOn(line -> line.getLevel() == Level.INFO)
                    .extracting(LogRecord::getMessage).singleElement().asString()
                    .matches("cache store answers again after 5 calls ran uncached \\(\\d+ store operations failed\\);"
                            + " caching resumed");
            String recovery = lines.stream().filter(line -> line.getLevel() == Level.INFO)
                    .findFirst().orElseThrow().getMessage();
            long operations = Long.parseLong(recovery.replaceAll(".*\\((\\d+) store operations.*", "$1"));
            assertThat(operations).as("several store operations per call").isGreaterThan(5);
            assertThat(store.counters().totals().get(Counter.STORE_ERRORS)).isEqualTo(operations);
            var read = code.policy().stats().get("read");
            assertThat(read.hits() + read.misses()).as("the restarted Redis starts empty: the outage's 5 calls and"
                    + " the one after, each counted once").isEqualTo(6);
        } finally {
            logger.removeHandler(capture);
        }
    }

    @Test
    void anUnreachableRedisAtStartIsAClearError() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        String url = "redis://:s3cret@127.0.0.1:" + port;

        // refused, not timed out: nothing waited for an answer that could not come
        assertThatThrownBy(() -> RedisCacheStore.connect(RedisStoreSettings.of(url), clock))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("cannot reach Redis at redis://127.0.0.1:" + port + ": connection refused")
                .message().doesNotContain("s3cret");
    }

    /**
     * Failed without being sent: the breaker, opened by the outage's first failure, answers at
     * once until a check finds Redis again, so an outage costs one wait, not one per call.
     */
    private static void assertSkipped(Executable call) {
        assertThatThrownBy(call::execute).isInstanceOf(RedisException.class)
                .hasMessageContaining("skipped until a check in the background finds it answering");
    }

    /** Redisson reconnects in the background; a limit only so that a broken reconnect fails the test. */
    private static void awaitWorking(RedisCacheStore store) {
        await().alias("the store answers again").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
                .ignoreExceptionsInstanceOf(RedisException.class).until(() -> store.size() >= 0);
    }

    private CacheEntry entry(String key) {
        Instant now = clock.instant();
        return new CacheEntry(key, "1", "", Duration.ofMillis(5), Map.of("github", "v1"), now, now.plusSeconds(300), 0);
    }
}
