package dev.execache.store.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.core.CacheEntry;
import dev.execache.core.CacheStore;
import dev.execache.core.CacheStoreContract;
import dev.execache.core.FlightLease;
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
 * The store contract on a real 3-master Redis Cluster (started once for the class), through a
 * {@code redis-cluster://} URL: every script's keys are in one slot, so each runs on one node.
 */
class RedisClusterStoreTest extends CacheStoreContract {
    private static TestRedisCluster cluster;
    private static RedissonClient client;

    private final List<String> prefixes = new ArrayList<>();

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = TestRedisCluster.start();
        client = Redisson.create(RedisCacheStore.config(RedisUrl.parse(cluster.url()), TestRedis.BEHAVIOUR_TIMEOUT));
    }

    @AfterAll
    static void stopCluster() {
        if (client != null) {
            client.shutdown();
        }
        if (cluster != null) {
            cluster.close();
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
    void aStoreConnectedByUrlKeepsEveryKeyOfItsNamespaceOnOneNode() throws Exception {
        String prefix = TestRedis.freshPrefix();
        prefixes.add(prefix);
        try (RedisCacheStore byUrl = RedisCacheStore.connect(RedisStoreSettings.of(cluster.url()).withKeyPrefix(prefix), clock)) {
            for (int i = 0; i < 20; i++) {
                byUrl.put(entry("v1:" + i));
            }
            byUrl.increment(dev.execache.core.Counter.HITS, 1);

            assertThat(byUrl.size()).isEqualTo(20);
            assertThat(byUrl.get("v1:7")).isPresent();
            assertThat(cluster.keysPerNode()).as("every key of the namespace on one of the three masters")
                    .filteredOn(count -> count > 0).hasSize(1);
        }
    }

    @Test
    void theFlightIsOneAcrossClientsOnTheCluster() throws Exception {
        RedissonClient other = Redisson.create(RedisCacheStore.config(RedisUrl.parse(cluster.url()), TestRedis.BEHAVIOUR_TIMEOUT));
        try {
            RedisCacheStore first = (RedisCacheStore) store;
            RedisCacheStore second = new RedisCacheStore(other, prefixes.get(0), BOUND, clock);
            try (FlightLease held = first.acquireFlight("v1:f", Duration.ofSeconds(30))) {
                assertThat(held).isNotEqualTo(FlightLease.LOCAL);
                assertThat(other.getLock(new KeyLayout(prefixes.get(0)).flight("v1:f")).isLocked()).isTrue();
            }
            try (FlightLease next = second.acquireFlight("v1:f", Duration.ofSeconds(1))) {
                assertThat(next).as("free again once released").isNotEqualTo(FlightLease.LOCAL);
            }
        } finally {
            other.shutdown();
        }
    }
}
