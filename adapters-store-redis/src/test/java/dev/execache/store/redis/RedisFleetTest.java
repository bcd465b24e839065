package dev.execache.store.redis;

import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;
import org.redisson.api.RedissonClient;

/** The fleet on one standalone Redis, through a {@code redis://} URL: the run's shared server. */
@ExtendWith(TestRedis.class)
class RedisFleetTest extends RedisFleetContract {
    private static String url;
    private static RedissonClient admin;

    @BeforeAll
    static void connect(TestRedis redis) {
        url = redis.url();
        admin = redis.client();
    }

    @AfterAll
    static void disconnect() {
        if (admin != null) {
            admin.shutdown();
        }
    }

    @Override
    protected String url() {
        return url;
    }

    @Override
    protected RedissonClient admin() {
        return admin;
    }

    /** The one server is the master; asked through the client, as it may be a server named by the environment. */
    @Override
    protected List<Long> millisLeftOnMasters(String key) {
        long left = admin.getKeys().remainTimeToLive(key);
        return left == -2 ? List.of() : List.of(left);
    }
}
