package dev.execache.store.redis;

import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;

/**
 * The fleet on a real Sentinel set (a master, its replica, a Sentinel; started once for the
 * class), through a {@code redis-sentinel://} URL: the flights are on the master the Sentinel names.
 */
class RedisSentinelFleetTest extends RedisFleetContract {
    private static TestRedisSentinel sentinels;
    private static RedissonClient admin;

    @BeforeAll
    static void startSentinels() throws Exception {
        sentinels = TestRedisSentinel.start();
        admin = Redisson.create(RedissonConfig.of(RedisUrl.parse(sentinels.url()), TestRedis.BEHAVIOUR_TIMEOUT));
    }

    @AfterAll
    static void stopSentinels() {
        if (admin != null) {
            admin.shutdown();
        }
        if (sentinels != null) {
            sentinels.close();
        }
    }

    @Override
    protected String url() {
        return sentinels.url();
    }

    @Override
    protected RedissonClient admin() {
        return admin;
    }

    @Override
    protected List<Long> millisLeftOnMasters(String key) throws IOException {
        long left = (Long) Resp.call(sentinels.masterPort(), "PTTL", key);
        return left == -2 ? List.of() : List.of(left);
    }
}
