package dev.execache.store.redis;

import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.redisson.api.redisnode.RedisNodes;

/**
 * What a store checks of the Redis it opens, in the background, each said once per process in one
 * line: a cache of the previous key layout under the same prefix, and a {@code maxmemory-policy}
 * that may evict execache's keys that have no TTL.
 */
final class ServerChecks {
    private static final System.Logger LOG = System.getLogger(RedisCacheStore.class.getName());

    /** Servers whose eviction policy was warned about: once per process and server. */
    private static final Set<String> WARNED_SERVERS = ConcurrentHashMap.newKeySet();
    /** Caches of the previous layout that were told about: once per process, server and prefix. */
    private static final Set<String> TOLD_PREVIOUS_LAYOUTS = ConcurrentHashMap.newKeySet();

    private final RedisCalls calls;
    private final KeyLayout keys;
    private final String server;

    ServerChecks(RedisCalls calls, KeyLayout keys) {
        this.calls = calls;
        this.keys = keys;
        this.server = calls.server();
    }

    /**
     * Says once, in the background, when Redis holds a cache of the layout before this one under
     * the same prefix: it is left alone (never read, never written) and the new layout starts
     * beside it; its entries expire by their TTL, its indexes and counters stay until removed.
     */
    CompletableFuture<Boolean> previousLayout() {
        String root = keys.previousRoot();
        try {
            return calls.send(() -> calls.redisson().getKeys().countExistsAsync(root + "counters", root + "lru",
                            root + "versions"))
                    .thenApply(found -> {
                        if (found > 0 && TOLD_PREVIOUS_LAYOUTS.add(server + " " + keys.prefix())) {
                            LOG.log(System.Logger.Level.WARNING, "Redis at " + server + " holds a cache of execache's"
                                    + " previous layout (keys " + root + "*): it is left alone and a new cache starts"
                                    + " beside it; its entries expire by their TTL, the rest stays until removed, e.g. with"
                                    + " redis-cli --scan --pattern '" + keys.previousPattern() + "' | xargs -r redis-cli del"
                                    + " (on a Cluster: redis-cli -c, against the master that holds them)");
                        }
                        return found > 0;
                    }).exceptionally(error -> {
                        LOG.log(System.Logger.Level.DEBUG, () -> "cannot look for a cache of the previous layout in Redis at "
                                + server + ": " + calls.describe(error));
                        return false;
                    });
        } catch (RuntimeException e) {
            return CompletableFuture.completedFuture(false);
        }
    }

    /**
     * Warns once per server, in one line, when Redis's {@code maxmemory-policy} may evict keys
     * that have no TTL: execache's indexes, counters and versions (only its entries carry one).
     * {@code noeviction} and the {@code volatile-*} policies keep them. Asked in the background;
     * a Redis that refuses {@code CONFIG} (disabled or renamed, as managed services do) is left
     * unchecked with a debug line.
     */
    CompletableFuture<?> evictionPolicy() {
        try {
            return calls.send(() -> calls.redisson().getRedisNodes(RedisNodes.SINGLE).getInstance()
                            .getConfigAsync("maxmemory-policy"))
                    .whenComplete((config, error) -> {
                        if (error != null || config == null) {
                            LOG.log(System.Logger.Level.DEBUG, () -> "cannot read the maxmemory-policy of Redis at "
                                    + server + ": " + (error == null ? "no answer" : calls.describe(error)));
                            return;
                        }
                        evictionPolicyWarning(server, config.get("maxmemory-policy"))
                                .filter(warning -> WARNED_SERVERS.add(server))
                                .ifPresent(warning -> LOG.log(System.Logger.Level.WARNING, warning));
                    });
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, () -> "cannot read the maxmemory-policy of Redis at " + server + ": " + e);
            return CompletableFuture.completedFuture(null);
        }
    }

    /** See {@link RedisCacheStore#entriesEstimatedBecause()}; asks Redis, within the budget. */
    Optional<String> entriesEstimatedBecause() {
        try {
            Map<String, String> config = calls.await(keys.partition(0), () -> calls.redisson()
                    .getRedisNodes(RedisNodes.SINGLE).getInstance().getConfigAsync("maxmemory-policy"));
            String policy = config == null ? null : config.get("maxmemory-policy");
            return policy != null && policy.startsWith("allkeys-")
                    ? Optional.of("Redis's maxmemory-policy " + policy + " may evict execache's indexes")
                    : Optional.empty();
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    /** The warning for a policy that may evict keys without a TTL, if {@code policy} is one. */
    static Optional<String> evictionPolicyWarning(String server, String policy) {
        if (policy == null || !policy.startsWith("allkeys-")) {
            return Optional.empty();
        }
        return Optional.of("Redis at " + server + " has maxmemory-policy " + policy + ", which may evict execache's"
                + " indexes and counters when memory is full (stats and bounds then drift); set noeviction or a"
                + " volatile-* policy such as volatile-lru: execache's entries have a TTL, its own keys do not");
    }
}
