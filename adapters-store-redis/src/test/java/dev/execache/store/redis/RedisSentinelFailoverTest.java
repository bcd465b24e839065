package dev.execache.store.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.execache.core.spi.CacheEntry;
import dev.execache.core.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.redisson.client.RedisException;

/**
 * A store connected through a {@code redis-sentinel://} URL across a failover: its master is
 * killed, the Sentinel promotes the replica, and the same store instance finds the new master.
 * In between, every call fails at once with a one-line error (the caller runs uncached).
 */
class RedisSentinelFailoverTest {
    /** What a call may take beyond its longest wait on a loaded machine before it counts as hanging. */
    private static final Duration HANG = Duration.ofSeconds(20);

    private final MutableClock clock = new MutableClock(Instant.now());
    private final ExecutorService caller = Executors.newSingleThreadExecutor();
    private final List<String> failures = new ArrayList<>();

    @AfterEach
    void stopCaller() {
        caller.shutdownNow();
    }

    @Test
    void afterTheSentinelPromotesTheReplicaTheSameStoreWorksAgain() throws Exception {
        // 2 s without an answer and the Sentinel takes the master for down: a failover within seconds
        try (TestRedisSentinel sentinels = TestRedisSentinel.start(Duration.ofSeconds(2));
                RedisCacheStore store = RedisCacheStore.connect(RedisStoreSettings.of(sentinels.url()), clock)) {
            store.put(entry("v1:before"));
            sentinels.awaitReplicaInSync();

            int dead = sentinels.killMaster();
            await("the Sentinel promoted the replica").atMost(Duration.ofSeconds(60)).pollInSameThread()
                    .pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(50)).until(() -> {
                        boolean failed = failsOrAnswers(() -> store.get("v1:before")).isEmpty();
                        if (sentinels.hasFailedOver(dead)) {
                            return true;
                        }
                        assertThat(failed).as("a call while there is no master fails").isTrue();
                        return false;
                    });
            int promoted = sentinels.masterPort();

            awaitAnswer(() -> {
                store.put(entry("v1:after"));
                return true;
            });

            assertThat(awaitAnswer(() -> store.get("v1:after"))).as("written after the failover, read back").isPresent();
            assertThat(awaitAnswer(() -> store.get("v1:before"))).as("replicated before the master died").isPresent();
            assertThat(Resp.call(promoted, "EXISTS", KeyLayout.of(RedisStoreSettings.DEFAULT_KEY_PREFIX).entry("v1:after")))
                    .as("on the promoted replica").isEqualTo(1L);
            assertThat(failures).as("the calls made while there was no master").isNotEmpty()
                    .allSatisfy(message -> assertThat(message).contains("Redis at " + RedisUrl.parse(sentinels.url()))
                            .doesNotContain("\n", "org.redisson", "redis.call"));
        }
    }

    /** Retries while the store fails (each failure recorded), until it answers. */
    private <T> T awaitAnswer(Callable<T> call) {
        return await().alias("the store works again after the failover").atMost(Duration.ofSeconds(60))
                .pollInSameThread().pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(100))
                .until(() -> failsOrAnswers(call), Optional::isPresent).orElseThrow();
    }

    /**
     * The call's answer, or empty if it failed with a store error (recorded); a call that has
     * not returned within the longest wait its budget allows (a stalled process's, see
     * {@link Budget}) and a loaded machine's allowance hangs, and fails the test.
     */
    private <T> Optional<T> failsOrAnswers(Callable<T> call) throws Exception {
        Future<T> running = caller.submit(call);
        try {
            return Optional.of(running.get(Budget.longest(RedisStoreSettings.DEFAULT_TIMEOUT).plus(HANG).toMillis(),
                    TimeUnit.MILLISECONDS));
        } catch (TimeoutException e) {
            throw new AssertionError("a call hung past the store's budget during the failover", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RedisException failure) {
                failures.add(failure.getMessage());
                return Optional.empty();
            }
            throw e;
        }
    }

    private CacheEntry entry(String key) {
        Instant now = clock.instant();
        return new CacheEntry(key, "1", "", Duration.ofMillis(5), Map.of("github", "v1"), now, now.plusSeconds(300), 0);
    }
}
