package dev.execache.store.redis;

import java.time.Duration;
import org.redisson.config.BaseMasterSlaveServersConfig;
import org.redisson.config.Config;
import org.redisson.config.EqualJitterDelay;
import org.redisson.config.ReadMode;
import org.redisson.config.SubscriptionMode;

/** How the store's own Redisson client is set up, for each topology a URL names. */
final class RedissonConfig {
    private RedissonConfig() {
    }

    /** Sentinel and Cluster alike: every command to the master, one timeout, no retry. */
    private static <T extends BaseMasterSlaveServersConfig<T>> void masterOnly(T servers, int millis, EqualJitterDelay reconnection) {
        servers.setReadMode(ReadMode.MASTER)
                .setSubscriptionMode(SubscriptionMode.MASTER)
                .setConnectTimeout(millis)
                .setTimeout(millis)
                .setSubscriptionTimeout(millis)
                .setRetryAttempts(0)
                .setReconnectionDelay(reconnection)
                .setMasterConnectionMinimumIdleSize(2)
                .setMasterConnectionPoolSize(32)
                .setSlaveConnectionMinimumIdleSize(0)
                .setSubscriptionConnectionMinimumIdleSize(1);
    }

    /**
     * Fails after one timeout, with no retry: on a store error the caller runs uncached, so a
     * retry would only add latency (and could count a hit twice). The client connects lazily,
     * in the background, and reconnects the same way, backing off to at most two seconds
     * between attempts.
     */
    static Config of(RedisUrl url, Duration timeout) {
        // The client waits as long as a stalled process may (see Budget); each caller's own wait is bounded by Budget.
        int millis = (int) Math.min(Integer.MAX_VALUE, Budget.longest(timeout).toMillis());
        Config config = new Config();
        config.setUseScriptCache(true);
        config.setLazyInitialization(true);
        config.setUsername(url.username());
        config.setPassword(url.password());
        EqualJitterDelay reconnection = new EqualJitterDelay(Duration.ofMillis(100), Duration.ofSeconds(2));
        switch (url.topology()) {
            case STANDALONE -> config.useSingleServer()
                    .setAddress(url.address())
                    .setDatabase(url.database())
                    .setConnectTimeout(millis)
                    .setTimeout(millis)
                    .setSubscriptionTimeout(millis)
                    .setRetryAttempts(0)
                    .setReconnectionDelay(reconnection)
                    .setConnectionMinimumIdleSize(2)
                    .setConnectionPoolSize(32)
                    .setSubscriptionConnectionMinimumIdleSize(1);
            // Reads go to the master as writes do: a replica may lag behind an entry just
            // written or removed, and the flight lock lives on the master.
            case SENTINEL -> masterOnly(config.useSentinelServers()
                    .setMasterName(url.master())
                    .addSentinelAddress(url.addresses().toArray(String[]::new))
                    .setDatabase(url.database())
                    // one Sentinel is enough to find the master; Sentinel's own quorum decides failovers
                    .setCheckSentinelsList(false), millis, reconnection);
            case CLUSTER -> masterOnly(config.useClusterServers()
                    .addNodeAddress(url.addresses().toArray(String[]::new)), millis, reconnection);
        }
        return config;
    }
}
