package dev.execache.core;

import java.time.Clock;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * An unbounded map store for the policy's own tests, where the store is not what is under
 * test (the real stores live in adapter modules, which depend on core).
 */
final class SimpleStore implements CacheStore {
    private final Clock clock;
    private final Map<String, CacheEntry> entries = new HashMap<>();
    private final Map<Counter, Long> counters = new EnumMap<>(Counter.class);
    private final Map<String, String> versions = new HashMap<>();

    SimpleStore(Clock clock) {
        this.clock = clock;
    }

    @Override
    public synchronized Optional<CacheEntry> get(String key) {
        Optional<CacheEntry> found = peek(key).map(entry -> entry.withHits(entry.hits() + 1));
        found.ifPresent(entry -> entries.put(key, entry));
        return found;
    }

    @Override
    public synchronized Optional<CacheEntry> peek(String key) {
        return Optional.ofNullable(entries.get(key)).filter(entry -> !entry.isExpiredAt(clock.instant()));
    }

    @Override
    public synchronized java.util.List<CacheEntry> entries() {
        return entries.values().stream().filter(entry -> !entry.isExpiredAt(clock.instant())).toList();
    }

    @Override public synchronized void put(CacheEntry entry) { entries.put(entry.key(), entry); }
    @Override public synchronized boolean remove(String key) { return entries.remove(key) != null; }

    @Override
    public synchronized int removeByTool(String tool) {
        int before = entries.size();
        entries.values().removeIf(entry -> entry.toolVersions().containsKey(tool));
        return before - entries.size();
    }

    @Override
    public synchronized int removeByPattern(String keyGlob) {
        int before = entries.size();
        entries.keySet().removeIf(Glob.of(keyGlob)::matches);
        return before - entries.size();
    }

    @Override public synchronized void clear() { entries.clear(); }
    @Override public synchronized int size() { return entries.size(); }
    @Override public synchronized long estimatedBytes() { return 0; }
    @Override public synchronized int purgeExpired() { return 0; }
    @Override public synchronized void increment(Counter counter, long delta) { counters.merge(counter, delta, Long::sum); }
    @Override public synchronized Map<Counter, Long> counters() { return new EnumMap<>(counters); }
    @Override public synchronized Map<String, String> lastSeenVersions() { return Map.copyOf(versions); }
    @Override public synchronized void recordVersions(Map<String, String> newVersions) { versions.putAll(newVersions); }
}
