package dev.execache.store.redis;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;

/**
 * The store contract on a real Sentinel set (a master, its replica, a Sentinel; started once for
 * the class), through a {@code redis-sentinel://} URL that names the Sentinel, not the master.
 */
class RedisSentinelStoreTest extends SharedRedisContract {
    private static TestRedisSentinel sentinels;
    private static RedissonClient client;

    @BeforeAll
    static void startSentinels() throws Exception {
        sentinels = TestRedisSentinel.start();
        client = Redisson.create(RedissonConfig.of(RedisUrl.parse(sentinels.url()), TestRedis.BEHAVIOUR_TIMEOUT));
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
    protected RedissonClient client() {
        return client;
    }

    @Test
    void aStoreConnectedThroughTheSentinelWritesToTheMaster() throws Exception {
        String prefix = freshPrefix();
        try (RedisCacheStore byUrl = RedisCacheStore.connect(RedisStoreSettings.of(sentinels.url()).withKeyPrefix(prefix), clock)) {
            byUrl.put(entry("v1:a"));

            assertThat(byUrl.get("v1:a")).isPresent();
            assertThat(Resp.call(sentinels.masterPort(), "EXISTS", byUrl.layout().entry("v1:a"))).isEqualTo(1L);
        }
    }
}
