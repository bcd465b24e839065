package dev.execache.cli;

import dev.execache.core.CacheEntry;
import dev.execache.core.CacheStore;
import dev.execache.core.Counter;
import dev.execache.core.FlightLease;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * Stands in for a store that could not be opened: every call fails with the reason, so the
 * policy runs uncached and says why, once.
 */
final class UnavailableStore implements CacheStore {
    private final String reason;

    UnavailableStore(String reason) {
        this.reason = reason;
    }

    private IllegalStateException unavailable() {
        return new IllegalStateException(reason);
    }

    @Override public Optional<CacheEntry> get(String key) { throw unavailable(); }
    @Override public Optional<CacheEntry> peek(String key) { throw unavailable(); }
    @Override public void put(CacheEntry entry) { throw unavailable(); }
    @Override public boolean remove(String key) { throw unavailable(); }
    @Override public int removeByTool(String tool) { throw unavailable(); }
    @Override public int removeByPattern(String keyGlob) { throw unavailable(); }
    @Override public void clear() { throw unavailable(); }
    @Override public int size() { throw unavailable(); }
    @Override public long estimatedBytes() { throw unavailable(); }
    @Override public int purgeExpired() { throw unavailable(); }
    @Override public void increment(Counter counter, long delta) { throw unavailable(); }
    @Override public Map<Counter, Long> counters() { throw unavailable(); }
    @Override public Map<String, String> lastSeenVersions() { throw unavailable(); }
    @Override public void recordVersions(Map<String, String> versions) { throw unavailable(); }
    @Override public FlightLease acquireFlight(String key, Duration maxHold) { throw unavailable(); }
}
