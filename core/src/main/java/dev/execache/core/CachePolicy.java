package dev.execache.core;

import java.time.Duration;
import java.util.Objects;

/**
 * How results are cached.
 *
 * @param enabled when false, nothing is read from or written to the store
 * @param ttl how long a result is reused
 * @param maxEntries how many results a store holds (used by whoever builds the store)
 * @param cacheNondeterministic whether a run whose code used a source of non-determinism
 *     ({@code Date.now}, {@code Math.random}, ...) is stored
 */
public record CachePolicy(boolean enabled, Duration ttl, int maxEntries, boolean cacheNondeterministic) {
    public static final Duration DEFAULT_TTL = Duration.ofMinutes(5);
    public static final int DEFAULT_MAX_ENTRIES = 100;
    public static final CachePolicy DEFAULTS = new CachePolicy(true, DEFAULT_TTL, DEFAULT_MAX_ENTRIES);

    public CachePolicy(boolean enabled, Duration ttl, int maxEntries) {
        this(enabled, ttl, maxEntries, true);
    }

    public CachePolicy {
        Objects.requireNonNull(ttl, "ttl must not be null");
        if (ttl.isZero() || ttl.isNegative()) {
            throw new IllegalArgumentException("ttl must be positive: " + ttl);
        }
        if (maxEntries < 1) {
            throw new IllegalArgumentException("maxEntries must be at least 1: " + maxEntries);
        }
    }

    public CachePolicy withEnabled(boolean newEnabled) {
        return new CachePolicy(newEnabled, ttl, maxEntries, cacheNondeterministic);
    }

    public CachePolicy withTtl(Duration newTtl) {
        return new CachePolicy(enabled, newTtl, maxEntries, cacheNondeterministic);
    }

    public CachePolicy withMaxEntries(int newMaxEntries) {
        return new CachePolicy(enabled, ttl, newMaxEntries, cacheNondeterministic);
    }

    public CachePolicy withCacheNondeterministic(boolean cache) {
        return new CachePolicy(enabled, ttl, maxEntries, cache);
    }
}
