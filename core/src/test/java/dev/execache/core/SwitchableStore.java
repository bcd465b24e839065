package dev.execache.core;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Wraps a store so a test can make every call fail (an outage) and count the calls that
 * reached it.
 */
public final class SwitchableStore implements CacheStore {
    private final CacheStore delegate;
    private final AtomicInteger calls = new AtomicInteger();
    private volatile boolean failing;

    public SwitchableStore(CacheStore delegate) {
        this.delegate = delegate;
    }

    public void fail(boolean fail) {
        this.failing = fail;
    }

    /** Calls that reached the store, failing or not. */
    public int calls() {
        return calls.get();
    }

    private CacheStore target() {
        calls.incrementAndGet();
        if (failing) {
            throw new IllegalStateException("store is down (test)");
        }
        return delegate;
    }

    @Override public Optional<CacheEntry> get(String key) { return target().get(key); }
    @Override public Optional<CacheEntry> peek(String key) { return target().peek(key); }
    @Override public void put(CacheEntry entry) { target().put(entry); }
    @Override public boolean remove(String key) { return target().remove(key); }
    @Override public int removeByTool(String tool) { return target().removeByTool(tool); }
    @Override public int removeByPattern(String keyGlob) { return target().removeByPattern(keyGlob); }
    @Override public void clear() { target().clear(); }
    @Override public int size() { return target().size(); }
    @Override public long estimatedBytes() { return target().estimatedBytes(); }
    @Override public int purgeExpired() { return target().purgeExpired(); }
    @Override public List<String> put(CacheEntry entry, GroupBound bound) { return target().put(entry, bound); }
    @Override public void increment(String tool, Map<Counter, Long> deltas) { target().increment(tool, deltas); }
    @Override public Map<Counter, Long> counters() { return target().counters(); }
    @Override public Map<String, Map<Counter, Long>> toolCounters() { return target().toolCounters(); }
    @Override public Map<String, String> lastSeenVersions() { return target().lastSeenVersions(); }
    @Override public void recordVersions(Map<String, String> versions) { target().recordVersions(versions); }

    @Override
    public FlightLease acquireFlight(String key, Duration maxHold) throws InterruptedException {
        return target().acquireFlight(key, maxHold);
    }
}
