package dev.execache.store.redis;

import dev.execache.core.CacheStoreContract;
import dev.execache.core.MutableClock;
import dev.execache.core.spi.CacheStore;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/**
 * The store contract on a Redis set-up other than one standalone server (Cluster, Sentinel),
 * signed, each store in a namespace of its own on one client the subclass starts for its class.
 */
abstract class SharedRedisContract extends CacheStoreContract {
    protected final List<String> prefixes = new ArrayList<>();

    /** The client on the subclass's Redis, started once for the class. */
    protected abstract RedissonClient client();

    /** A namespace of its own, deleted after the test. */
    protected String freshPrefix() {
        String prefix = TestRedis.freshPrefix();
        prefixes.add(prefix);
        return prefix;
    }

    @Override
    protected CacheStore createStore(int maxEntries, MutableClock clock) {
        return new RedisCacheStore(client(), freshPrefix(), maxEntries, SignedRedisCacheStoreTest.KEYS,
                TestRedis.BEHAVIOUR_TIMEOUT, clock);
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
        client().<String, String>getMap(((RedisCacheStore) store).layout().entry(key), StringCodec.INSTANCE).put("value", newValue);
    }

    @AfterEach
    void deleteTestKeys() {
        prefixes.forEach(prefix -> client().getKeys().deleteByPattern(KeyLayout.of(prefix).pattern()));
    }
}
