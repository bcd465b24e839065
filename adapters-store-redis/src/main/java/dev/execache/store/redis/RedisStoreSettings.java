package dev.execache.store.redis;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * How to reach Redis and how much to keep there.
 *
 * @param url {@code redis://[[user:]password@]host[:port][/database]}, or {@code rediss://} for TLS
 * @param keyPrefix put before every key, so that several deployments can share one server
 * @param maxEntries the fleet-wide bound; one more evicts the least recently used
 * @param timeout how long one store operation may wait for Redis before it fails and Redis is
 *     skipped until it answers again (a store error only means a run goes on uncached)
 * @param signingKeys the fleet's keys: with one, every entry is signed and an entry that no key
 *     signed is never served; without ({@link SigningKeys#none()}) entries are neither signed nor checked
 * @param partitions how many partitions the cache is spread over, each in a hash slot of its own,
 *     so that a Redis Cluster spreads it over its masters; every instance of a fleet must use the
 *     same number (as the same prefix): another number is another cache
 */
public record RedisStoreSettings(String url, String keyPrefix, int maxEntries, Duration timeout, SigningKeys signingKeys,
        int partitions) {
    public static final String DEFAULT_KEY_PREFIX = "execache:";
    public static final int DEFAULT_MAX_ENTRIES = 100;
    /**
     * Long enough that a busy machine (a client or server starved of CPU for a while) does not
     * pass for a dead Redis; a slow Redis costs a call this once per outage, see the breaker.
     */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(2);
    /** Enough to spread over the masters of a large Cluster; a small bound uses fewer (see {@code KeyLayout}). */
    public static final int DEFAULT_PARTITIONS = 16;

    /** @throws IllegalArgumentException naming the field that is wrong, and why */
    public RedisStoreSettings {
        RedisUrl.parse(url);
        if (keyPrefix == null || keyPrefix.isEmpty()) {
            throw new IllegalArgumentException("keyPrefix must not be empty: an empty prefix would mix execache keys with others");
        }
        if (keyPrefix.contains("{") || keyPrefix.contains("}")) {
            throw new IllegalArgumentException("keyPrefix must not contain { or }: execache puts its own hash tags around it");
        }
        if (partitions < 1 || partitions > KeyLayout.MAX_PARTITIONS) {
            throw new IllegalArgumentException("partitions must be between 1 and " + KeyLayout.MAX_PARTITIONS + ": " + partitions);
        }
        if (maxEntries < 1) {
            throw new IllegalArgumentException("maxEntries must be at least 1: " + maxEntries);
        }
        Objects.requireNonNull(timeout, "timeout must not be null");
        if (timeout.isNegative() || timeout.isZero() || timeout.toMillis() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("timeout must be positive and under 24 days: " + timeout);
        }
        Objects.requireNonNull(signingKeys, "signingKeys must not be null (SigningKeys.none() for none)");
    }

    /** The defaults for everything but the URL. */
    public static RedisStoreSettings of(String url) {
        return new RedisStoreSettings(url, DEFAULT_KEY_PREFIX, DEFAULT_MAX_ENTRIES, DEFAULT_TIMEOUT, SigningKeys.none(),
                DEFAULT_PARTITIONS);
    }

    public RedisStoreSettings withKeyPrefix(String newKeyPrefix) {
        return new RedisStoreSettings(url, newKeyPrefix, maxEntries, timeout, signingKeys, partitions);
    }

    public RedisStoreSettings withMaxEntries(int newMaxEntries) {
        return new RedisStoreSettings(url, keyPrefix, newMaxEntries, timeout, signingKeys, partitions);
    }

    public RedisStoreSettings withTimeout(Duration newTimeout) {
        return new RedisStoreSettings(url, keyPrefix, maxEntries, newTimeout, signingKeys, partitions);
    }

    public RedisStoreSettings withSigningKeys(SigningKeys newSigningKeys) {
        return new RedisStoreSettings(url, keyPrefix, maxEntries, timeout, newSigningKeys, partitions);
    }

    public RedisStoreSettings withPartitions(int newPartitions) {
        return new RedisStoreSettings(url, keyPrefix, maxEntries, timeout, signingKeys, newPartitions);
    }

    /**
     * What a process says when it opens a store with these settings whose entries are not signed
     * (one line, without the URL's credentials); empty when they are signed. A process that hands
     * an open store to several commands says it to each, as each would have opened it.
     */
    public Optional<String> unsignedWarning() {
        return signingKeys.isEmpty()
                ? Optional.of("entries in Redis at " + RedisUrl.parse(url) + " are not signed: anyone who can"
                        + " write to it can plant results; give the fleet a key (EXECACHE_SIGNING_KEY or signing_key_file)")
                : Optional.empty();
    }

    /** Without the credentials the URL may hold. */
    @Override
    public String toString() {
        return "RedisStoreSettings[url=" + RedisUrl.parse(url) + ", keyPrefix=" + keyPrefix
                + ", maxEntries=" + maxEntries + ", timeout=" + timeout + ", signingKeys=" + signingKeys + ", partitions=" + partitions + "]";
    }
}
