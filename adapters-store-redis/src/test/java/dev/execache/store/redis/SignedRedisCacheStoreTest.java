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

/** The whole store contract with a fleet key: signing changes nothing a store promises. */
@ExtendWith(TestRedis.class)
class SignedRedisCacheStoreTest extends CacheStoreContract {
    static final SigningKeys KEYS = SigningKeys.of(List.of("the fleet's key for tests, 0123456789"));

    private final List<String> prefixes = new ArrayList<>();
    private final TestRedis redis;

    SignedRedisCacheStoreTest(TestRedis redis) {
        this.redis = redis;
    }

    @Override
    protected CacheStore createStore(int maxEntries, MutableClock clock) {
        String prefix = TestRedis.freshPrefix();
        prefixes.add(prefix);
        return RedisCacheStore.connect(RedisStoreSettings.of(redis.url()).withKeyPrefix(prefix).withMaxEntries(maxEntries)
                .withTimeout(TestRedis.BEHAVIOUR_TIMEOUT)
                .withSigningKeys(KEYS), clock);
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
        RedissonClient admin = redis.client();
        try {
            admin.<String, String>getMap(((RedisCacheStore) store).layout().entry(key), StringCodec.INSTANCE).put("value", newValue);
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
