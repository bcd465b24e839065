package dev.execache.store.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.core.spi.Counter;
import dev.execache.core.spi.FlightLease;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;

/**
 * The store contract on a real 3-master Redis Cluster (started once for the class), through a
 * {@code redis-cluster://} URL: every script's keys are in one slot, so each runs on one node.
 */
class RedisClusterStoreTest extends SharedRedisContract {
    private static TestRedisCluster cluster;
    private static RedissonClient client;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = TestRedisCluster.start();
        client = Redisson.create(RedissonConfig.of(RedisUrl.parse(cluster.url()), TestRedis.BEHAVIOUR_TIMEOUT));
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
    protected RedissonClient client() {
        return client;
    }

    @Test
    void aStoreConnectedByUrlKeepsEveryKeyOfItsNamespaceOnOneNode() throws Exception {
        String prefix = freshPrefix();
        try (RedisCacheStore byUrl = RedisCacheStore.connect(RedisStoreSettings.of(cluster.url()).withKeyPrefix(prefix), clock)) {
            for (int i = 0; i < 20; i++) {
                byUrl.put(entry("v1:" + i));
            }
            byUrl.counters().increment(Counter.HITS, 1);

            assertThat(byUrl.size()).isEqualTo(20);
            assertThat(byUrl.get("v1:7")).isPresent();
            assertThat(cluster.keysPerNode()).as("every key of the namespace on one of the three masters")
                    .filteredOn(count -> count > 0).hasSize(1);
        }
    }

    @Test
    void theFlightIsOneAcrossClientsOnTheCluster() throws Exception {
        RedissonClient other = Redisson.create(RedissonConfig.of(RedisUrl.parse(cluster.url()), TestRedis.BEHAVIOUR_TIMEOUT));
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
