package dev.execache.store.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.Counter;
import dev.execache.core.spi.FlightLease;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;

/**
 * The store contract on a real 3-master Redis Cluster (started once for the class), through a
 * {@code redis-cluster://} URL: every script's keys are in one partition's slot, so each runs on
 * one node, and the partitions spread one cache over every master.
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
    void aCacheOfAFewHundredEntriesIsSpreadOverEveryMaster() throws Exception {
        String prefix = freshPrefix();
        try (RedisCacheStore byUrl = RedisCacheStore.connect(RedisStoreSettings.of(cluster.url()).withKeyPrefix(prefix)
                .withMaxEntries(10_000), clock)) {
            int entries = 300;
            for (int i = 0; i < entries; i++) {
                byUrl.put(entry("v1:" + i));
            }
            byUrl.counters().increment(Counter.HITS, 1);

            assertThat(byUrl.size()).isEqualTo(entries);
            for (int i = 0; i < entries; i++) {
                assertThat(byUrl.get("v1:" + i)).as("v1:" + i).map(CacheEntry::value).contains("\"value of v1:" + i + "\"");
            }
            assertThat(byUrl.counters().totals().get(Counter.HITS)).as("the partitions' counters summed").isEqualTo(1L);
            List<Long> perMaster = cluster.keysPerNode(byUrl.layout().entryPattern());
            assertThat(perMaster.stream().mapToLong(Long::longValue).sum()).isEqualTo(entries);
            assertThat(perMaster).as("entries on each of the three masters").allSatisfy(held ->
                    assertThat(held).isBetween(entries / 5L, entries / 2L));
        }
    }

    @Test
    void everyPartitionsSlotIsTheOneRedisGivesItAndInItsSliceOfTheSlots() throws Exception {
        KeyLayout layout = KeyLayout.of("execache:");
        for (KeyLayout.Partition partition : layout.all()) {
            long slot = cluster.slotOf(partition.lru());
            assertThat(slot).as(partition.root()).isEqualTo(KeyLayout.slot(layout.tag(partition.index())))
                    .isBetween(16384L * partition.index() / layout.partitions(),
                            16384L * (partition.index() + 1) / layout.partitions() - 1);
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
                assertThat(other.getLock(first.layout().flight("v1:f")).isLocked()).isTrue();
            }
            try (FlightLease next = second.acquireFlight("v1:f", Duration.ofSeconds(1))) {
                assertThat(next).as("free again once released").isNotEqualTo(FlightLease.LOCAL);
            }
        } finally {
            other.shutdown();
        }
    }
}
