package dev.execache.store.redis;

import dev.execache.core.CacheStoreContract;
import dev.execache.core.MutableClock;
import dev.execache.core.spi.CacheStore;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

@ExtendWith(TestRedis.class)
class RedisCacheStoreTest extends CacheStoreContract {
    private final List<String> prefixes = new ArrayList<>();
    private final TestRedis redis;
    private boolean refusingWrites;

    RedisCacheStoreTest(TestRedis redis) {
        this.redis = redis;
    }

    @Override
    protected CacheStore createStore(int maxEntries, MutableClock clock) {
        String prefix = TestRedis.freshPrefix();
        prefixes.add(prefix);
        return RedisCacheStore.connect(RedisStoreSettings.of(redis.url()).withKeyPrefix(prefix).withMaxEntries(maxEntries)
                .withTimeout(TestRedis.BEHAVIOUR_TIMEOUT), clock);
    }

    /** A stray writer changes the value field of the entry's hash; the checksum field stays. */
    @Override
    protected void damageValue(String key, String newValue) {
        RedissonClient admin = redis.client();
        try {
            admin.<String, String>getMap(((RedisCacheStore) store).layout().entry(key), StringCodec.INSTANCE).put("value", newValue);
        } finally {
            admin.shutdown();
        }
    }

    /** Redis out of memory under noeviction: only on a server the tests started, never on one named to them. */
    @Override
    protected boolean refuseWrites() {
        if (System.getenv(TestRedis.URL_VARIABLE) != null) {
            return false;
        }
        setMemoryLimit("1", "noeviction");
        refusingWrites = true;
        return true;
    }

    @AfterEach
    void acceptWritesAgain() {
        if (refusingWrites) {
            setMemoryLimit("0", "noeviction");
            refusingWrites = false;
        }
    }

    private void setMemoryLimit(String maxmemory, String policy) {
        RedissonClient admin = redis.client();
        try {
            var node = admin.getRedisNodes(org.redisson.api.redisnode.RedisNodes.SINGLE).getInstance();
            node.setConfig("maxmemory-policy", policy);
            node.setConfig("maxmemory", maxmemory);
        } finally {
            admin.shutdown();
        }
    }

    @AfterEach
    void deleteTestKeys() {
        RedissonClient admin = redis.client();
        try {
            prefixes.forEach(prefix -> admin.getKeys().deleteByPattern(KeyLayout.of(prefix).pattern()));
        } finally {
            admin.shutdown();
        }
    }
}
