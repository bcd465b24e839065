package dev.execache.store.redis;

import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;

/**
 * The fleet on a real 3-master Redis Cluster (started once for the class), through a
 * {@code redis-cluster://} URL: each flight is a key on one of the masters, asked of each.
 */
class RedisClusterFleetTest extends RedisFleetContract {
    private static TestRedisCluster cluster;
    private static RedissonClient admin;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = TestRedisCluster.start();
        admin = Redisson.create(RedissonConfig.of(RedisUrl.parse(cluster.url()), TestRedis.BEHAVIOUR_TIMEOUT));
    }

    @AfterAll
    static void stopCluster() {
        if (admin != null) {
            admin.shutdown();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Override
    protected String url() {
        return cluster.url();
    }

    @Override
    protected RedissonClient admin() {
        return admin;
    }

    @Override
    protected List<Long> millisLeftOnMasters(String key) throws IOException {
        return cluster.millisLeftPerNode(key).stream().filter(left -> left != -2).toList();
    }
}
