package dev.execache.store.redis;

import dev.execache.core.spi.CacheStore;
import dev.execache.core.CacheStoreContract;
import dev.execache.core.MutableClock;
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
            admin.<String, String>getMap(new KeyLayout(prefixes.get(0)).entry(key), StringCodec.INSTANCE).put("value", newValue);
        } finally {
            admin.shutdown();
        }
    }

    @AfterEach
    void deleteTestKeys() {
        RedissonClient admin = redis.client();
        try {
            prefixes.forEach(prefix -> admin.getKeys().deleteByPattern(new KeyLayout(prefix).pattern()));
        } finally {
            admin.shutdown();
        }
    }
}
