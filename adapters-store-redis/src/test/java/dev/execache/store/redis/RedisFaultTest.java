package dev.execache.store.redis;


import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.Counter;
import dev.execache.core.MutableClock;
import java.net.ServerSocket;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
            assertSkipped(store::counters);
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
                    store::counters, () -> store.increment(Counter.MISSES, 1),
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
    private static void awaitWorking(RedisCacheStore store) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (true) {
            try {
                store.size();
                return;
            } catch (RedisException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(100);
            }
        }
    }

    private CacheEntry entry(String key) {
        Instant now = clock.instant();
        return new CacheEntry(key, "1", "", Duration.ofMillis(5), Map.of("github", "v1"), now, now.plusSeconds(300), 0);
    }
}
