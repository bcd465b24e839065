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
    private final String url;
    private final RedissonClient admin;
    private final RedisCacheStore store;

    RedisMemoryBoundTest(TestRedis redis) {
        url = redis.url();
        admin = redis.client();
        store = RedisCacheStore.connect(RedisStoreSettings.of(redis.url()).withKeyPrefix(prefix).withMaxEntries(BOUND), clock);
    }

    @AfterEach
    void cleanUp() {
        store.close();
        admin.getKeys().deleteByPattern(KeyLayout.of(prefix).pattern());
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

        KeyLayout layout = store.layout();
        long entries = admin.getKeys().getKeysStream(KeysScanOptions.defaults().pattern(layout.entryPattern())).count();
        long otherKeys = admin.getKeys().getKeysStream(KeysScanOptions.defaults().pattern(layout.pattern())).count() - entries;
        long toolMembers = layout.all().stream().flatMap(partition -> keysMatching(partition, "t:*"))
                .mapToLong(toolKey -> admin.getSet(toolKey, StringCodec.INSTANCE).size())
                .sum();
        assertThat(layout.used()).as("a bound of 100 is spread over partitions").isGreaterThan(1);
        assertThat(layout.all().stream().mapToLong(partition -> zsetSize(partition, "lru")).sum()).isEqualTo(BOUND);
        assertThat(layout.all().stream().mapToLong(partition -> zsetSize(partition, "exp")).sum()).isEqualTo(BOUND);
        assertThat(layout.all().stream().mapToLong(partition -> admin.getMap(partition.meta(), StringCodec.INSTANCE).size())
                .sum()).isEqualTo(BOUND);
        assertThat(toolMembers).as("tool index members, two tools per entry").isLessThanOrEqualTo(2L * BOUND);
        assertThat(entries).as("entry hashes").isEqualTo(BOUND);
        assertThat(otherKeys).as("index and counter keys: the fixed ones and one per tool, in each partition used")
                .isLessThanOrEqualTo(layout.used() * (9L + 10));
        assertThat(store.size()).isEqualTo(BOUND);
        Map<Counter, Long> counters = store.counters().totals();
        assertThat(counters.get(Counter.EVICTIONS) + counters.get(Counter.EXPIRATIONS)).isEqualTo(10_000L - BOUND);
        assertThat(counters.get(Counter.EXPIRATIONS)).as("entries outlived by the clock, every 1,000 puts").isPositive();
    }

    @Test
    void redisItselfExpiresEveryEntryAtItsTtl() {
        store.put(entry("v1:a", Map.of()));

        long ttlMillis = admin.getBucket(store.layout().entry("v1:a")).remainTimeToLive();

        assertThat(ttlMillis).isPositive().isLessThanOrEqualTo(TTL.toMillis());
    }

    @Test
    void anEntryThatRedisExpiredLeavesNoIndexBehind() {
        store.put(entry("v1:a", Map.of("github", "1")));
        admin.getKeys().delete(store.layout().entry("v1:a"));
        clock.advance(TTL);

        assertThat(store.get("v1:a")).isEmpty();

        assertThat(store.counters().totals().get(Counter.EXPIRATIONS)).isEqualTo(1L);
        String root = store.layout().partitionFor("v1:a").root();
        assertThat(admin.getKeys().getKeysStream(KeysScanOptions.defaults().pattern(KeyLayout.of(prefix).pattern())))
                .as("only the entry's partition's sequence, counters and byte count are left")
                .containsExactlyInAnyOrder(root + "seq", root + "counters", root + "bytes");
        assertThat(store.estimatedBytes()).isZero();
        assertThat(store.removeByTool("github")).isZero();
    }

    @Test
    void anEntryThatRedisDroppedBeforeItsTimeIsCountedOnceAsEvictedNotAsOneOfOurs() {
        // a bound small enough for one partition, so that the bound is one exact LRU
        int bound = KeyLayout.MIN_SHARE;
        try (RedisCacheStore small = RedisCacheStore.connect(RedisStoreSettings.of(url).withKeyPrefix(prefix + "small:")
                .withMaxEntries(bound), clock)) {
            for (int i = 0; i < bound; i++) {
                small.put(entry("v1:" + i, Map.of()));
                clock.advance(Duration.ofMillis(1));
            }
            admin.getKeys().delete(small.layout().entry("v1:0"));

            small.put(entry("v1:new", Map.of()));

            assertThat(small.size()).isEqualTo(bound);
            assertThat(small.peek("v1:1")).as("the bound took the dropped entry, not a live one").isPresent();
            assertThat(small.counters().totals().get(Counter.EVICTIONS)).isEqualTo(1L);
            assertThat(small.counters().totals().get(Counter.EXPIRATIONS)).isZero();
        } finally {
            admin.getKeys().deleteByPattern(KeyLayout.of(prefix + "small:").pattern());
        }
    }

    private Stream<String> keysMatching(KeyLayout.Partition partition, String pattern) {
        return admin.getKeys().getKeysStream(KeysScanOptions.defaults().pattern(partition.root().replaceAll("([\\[\\]*?\\\\{}])", "\\\\$1") + pattern));
    }

    private long zsetSize(KeyLayout.Partition partition, String name) {
        return admin.getScoredSortedSet(partition.root() + name, StringCodec.INSTANCE).size();
    }

    private CacheEntry entry(String key, Map<String, String> tools) {
        Instant now = clock.instant();
        return new CacheEntry(key, "\"" + key + "\"", "", Duration.ofMillis(5), tools, now, now.plus(TTL), 0);
    }
}
