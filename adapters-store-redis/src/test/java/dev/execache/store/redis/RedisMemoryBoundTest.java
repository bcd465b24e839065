package dev.execache.store.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.core.MutableClock;
import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.Counter;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.redisson.api.RedissonClient;
import org.redisson.api.options.KeysScanOptions;
import org.redisson.client.codec.StringCodec;

/**
 * What Redisson's scripted eviction is known to get wrong (an index that outgrows the map,
 * expired entries that linger until a client task gets to them) must not happen here: after
 * many puts the server holds about the bound's worth of keys and index members.
 */
@ExtendWith(TestRedis.class)
class RedisMemoryBoundTest {
    private static final int BOUND = 100;
    private static final Duration TTL = Duration.ofMinutes(5);

    private final MutableClock clock = new MutableClock(Instant.now());
    private final String prefix = TestRedis.freshPrefix();
    private final RedissonClient admin;
    private final RedisCacheStore store;

    RedisMemoryBoundTest(TestRedis redis) {
        admin = redis.client();
        store = RedisCacheStore.connect(RedisStoreSettings.of(redis.url()).withKeyPrefix(prefix).withMaxEntries(BOUND), clock);
    }

    @AfterEach
    void cleanUp() {
        store.close();
        admin.getKeys().deleteByPattern(new KeyLayout(prefix).pattern());
        admin.shutdown();
    }

    @Test
    void tenThousandPutsWithABoundOfOneHundredLeaveAboutOneHundredEntriesWorth() {
        for (int i = 0; i < 10_000; i++) {
            store.put(entry("v1:" + i, Map.of("seven" + i % 7, "1", "three" + i % 3, "2")));
            if (i % 3 == 0) {
                store.get("v1:" + (i - i % 10));
            }
            if (i % 1_000 == 500) {
                clock.advance(TTL);
            }
            clock.advance(Duration.ofMillis(1));
        }

        long keys = keysMatching("*").count();
        long toolMembers = keysMatching("t:*")
                .mapToLong(toolKey -> admin.getSet(toolKey, StringCodec.INSTANCE).size())
                .sum();
        assertThat(zsetSize("lru")).isEqualTo(BOUND);
        assertThat(zsetSize("exp")).isEqualTo(BOUND);
        assertThat(admin.getMap(new KeyLayout(prefix).root() + "meta", StringCodec.INSTANCE).size()).isEqualTo(BOUND);
        assertThat(toolMembers).as("tool index members, two tools per entry").isLessThanOrEqualTo(2L * BOUND);
        assertThat(keys).as("entry hashes plus a few index and counter keys").isBetween((long) BOUND, BOUND + 20L);
        assertThat(store.size()).isEqualTo(BOUND);
        Map<Counter, Long> counters = store.counters().totals();
        assertThat(counters.get(Counter.EVICTIONS) + counters.get(Counter.EXPIRATIONS)).isEqualTo(10_000L - BOUND);
        assertThat(counters.get(Counter.EXPIRATIONS)).as("entries outlived by the clock, every 1,000 puts").isPositive();
    }

    @Test
    void redisItselfExpiresEveryEntryAtItsTtl() {
        store.put(entry("v1:a", Map.of()));

        long ttlMillis = admin.getBucket(new KeyLayout(prefix).root() + "e:v1:a").remainTimeToLive();

        assertThat(ttlMillis).isPositive().isLessThanOrEqualTo(TTL.toMillis());
    }

    @Test
    void anEntryThatRedisExpiredLeavesNoIndexBehind() {
        store.put(entry("v1:a", Map.of("github", "1")));
        admin.getKeys().delete(new KeyLayout(prefix).entry("v1:a"));
        clock.advance(TTL);

        assertThat(store.get("v1:a")).isEmpty();

        assertThat(store.counters().totals().get(Counter.EXPIRATIONS)).isEqualTo(1L);
        assertThat(keysMatching("*"))
                .as("only the sequence and the counters are left")
                .containsExactlyInAnyOrder(new KeyLayout(prefix).root() + "seq", new KeyLayout(prefix).root() + "counters", new KeyLayout(prefix).root() + "bytes");
        assertThat(store.estimatedBytes()).isZero();
        assertThat(store.removeByTool("github")).isZero();
    }

    @Test
    void anEntryThatRedisDroppedBeforeItsTimeIsCountedOnceAsEvictedNotAsOneOfOurs() {
        for (int i = 0; i < BOUND; i++) {
            store.put(entry("v1:" + i, Map.of()));
            clock.advance(Duration.ofMillis(1));
        }
        admin.getKeys().delete(new KeyLayout(prefix).entry("v1:0"));

        store.put(entry("v1:new", Map.of()));

        assertThat(store.size()).isEqualTo(BOUND);
        assertThat(store.peek("v1:1")).as("the bound took the dropped entry, not a live one").isPresent();
        assertThat(store.counters().totals().get(Counter.EVICTIONS)).isEqualTo(1L);
        assertThat(store.counters().totals().get(Counter.EXPIRATIONS)).isZero();
    }

    private Stream<String> keysMatching(String pattern) {
        return admin.getKeys().getKeysStream(KeysScanOptions.defaults().pattern(new KeyLayout(prefix).root() + pattern));
    }

    private long zsetSize(String name) {
        return admin.getScoredSortedSet(new KeyLayout(prefix).root() + name, StringCodec.INSTANCE).size();
    }

    private CacheEntry entry(String key, Map<String, String> tools) {
        Instant now = clock.instant();
        return new CacheEntry(key, "\"" + key + "\"", "", Duration.ofMillis(5), tools, now, now.plus(TTL), 0);
    }
}
