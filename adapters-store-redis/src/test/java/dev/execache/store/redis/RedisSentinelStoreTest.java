package dev.execache.store.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.core.CacheEntry;
import dev.execache.core.CacheStore;
import dev.execache.core.CacheStoreContract;
import dev.execache.core.MutableClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/**
 * The store contract on a real Sentinel set (a master, its replica, a Sentinel; started once for
 * the class), through a {@code redis-sentinel://} URL that names the Sentinel, not the master.
 */
class RedisSentinelStoreTest extends CacheStoreContract {
    private static TestRedisSentinel sentinels;
    private static RedissonClient client;

    private final List<String> prefixes = new ArrayList<>();

    @BeforeAll
    static void startSentinels() throws Exception {
        sentinels = TestRedisSentinel.start();
        client = Redisson.create(RedisCacheStore.config(RedisUrl.parse(sentinels.url()), TestRedis.BEHAVIOUR_TIMEOUT));
    }

    @AfterAll
    static void stopSentinels() {
        if (client != null) {
            client.shutdown();
        }
        if (sentinels != null) {
            sentinels.close();
        }
    }

    @Override
    protected CacheStore createStore(int maxEntries, MutableClock clock) {
        String prefix = TestRedis.freshPrefix();
        prefixes.add(prefix);
        return new RedisCacheStore(client, prefix, maxEntries, SignedRedisCacheStoreTest.KEYS, TestRedis.BEHAVIOUR_TIMEOUT,
                clock);
    }

    /** The full 80,000 operations run on standalone Redis (RedisCacheStoreTest); here a tenth shows the same. */
    @Override
    protected int operationsPerThreadForConcurrencyTest() {
        return 1_000;
    }

    @Override
    protected boolean refusesDamagedEntries() {
        return true;
    }

    @Override
    protected void damageValue(String key, String newValue) {
        client.<String, String>getMap(new KeyLayout(prefixes.get(0)).entry(key), StringCodec.INSTANCE).put("value", newValue);
    }

    @AfterEach
    void deleteTestKeys() {
        prefixes.forEach(prefix -> client.getKeys().deleteByPattern(new KeyLayout(prefix).pattern()));
    }

    @Test
    void aStoreConnectedThroughTheSentinelWritesToTheMaster() throws Exception {
        String prefix = TestRedis.freshPrefix();
        prefixes.add(prefix);
        try (RedisCacheStore byUrl = RedisCacheStore.connect(RedisStoreSettings.of(sentinels.url()).withKeyPrefix(prefix), clock)) {
            byUrl.put(entry("v1:a"));

            assertThat(byUrl.get("v1:a")).isPresent();
            assertThat(Resp.call(sentinels.masterPort(), "EXISTS", new KeyLayout(prefix).entry("v1:a"))).isEqualTo(1L);
        }
    }
}
