package dev.execache.core;

import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.CacheStore;
import dev.execache.core.spi.Counter;
import dev.execache.core.spi.FlightLease;
import dev.execache.core.spi.GroupBound;
import dev.execache.core.spi.SessionRegistry;
import dev.execache.core.spi.StoreCounters;
import dev.execache.core.spi.WriteGenerations;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Wraps a store so a test can make every call fail (an outage) and count the calls that
 * reached it.
 */
public final class SwitchableStore implements CacheStore {
    private final CacheStore delegate;
    private final AtomicInteger calls = new AtomicInteger();
    private volatile boolean failing;
    private volatile boolean failingWrites;
    private volatile boolean failingPuts;
    private volatile boolean failingGenerations;
    private volatile Supplier<RuntimeException> writeFailure =
            () -> new IllegalStateException("store is full (test)");

    public SwitchableStore(CacheStore delegate) {
        this.delegate = delegate;
    }

    public void fail(boolean fail) {
        this.failing = fail;
    }

    /** Reads work, every write fails: a full disk, Redis out of memory. */
    public void failWrites(boolean fail) {
        this.failingWrites = fail;
    }

    /** Writes fail with {@code failure} from now on: Redis gone in the middle of a call, say. */
    public void failWrites(Supplier<RuntimeException> failure) {
        this.writeFailure = failure;
        this.failingWrites = true;
    }

    /**
     * Storing a result fails, everything else works: a SQLite file on a full disk, which keeps
     * counts in memory until its next write.
     */
    public void failPuts(boolean fail) {
        this.failingPuts = fail;
    }

    /** Reading or advancing a write generation fails, everything else works. */
    public void failWriteGenerations(boolean fail) {
        this.failingGenerations = fail;
    }

    private WriteGenerations generations(CacheStore target) {
        if (failingGenerations) {
            throw new IllegalStateException("write generations cannot be read (test)");
        }
        return target.writeGenerations();
    }

    private CacheStore writeTarget() {
        CacheStore target = target();
        if (failingWrites) {
            throw writeFailure.get();
        }
        return target;
    }

    private CacheStore putTarget() {
        CacheStore target = writeTarget();
        if (failingPuts) {
            throw new IllegalStateException("[SQLITE_FULL] database or disk is full (test)");
        }
        return target;
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
    @Override public List<CacheEntry> entries() { return target().entries(); }
    @Override public void put(CacheEntry entry) { putTarget().put(entry); }
    @Override public boolean remove(String key) { return writeTarget().remove(key); }
    @Override public int removeByTool(String tool) { return writeTarget().removeByTool(tool); }
    @Override public int removeByTool(String tool, String version) { return writeTarget().removeByTool(tool, version); }
    @Override public int removeByPattern(Glob keys) { return writeTarget().removeByPattern(keys); }
    @Override public void clear() { writeTarget().clear(); }
    @Override public int size() { return target().size(); }
    @Override public long estimatedBytes() { return target().estimatedBytes(); }
    @Override public int purgeExpired() { return target().purgeExpired(); }
    @Override public List<String> put(CacheEntry entry, GroupBound bound) { return putTarget().put(entry, bound); }
    /** Counting goes where writes go, reading where reads go. */
    @Override
    public StoreCounters counters() {
        return new StoreCounters() {
            @Override public void increment(String tool, String agent, Map<Counter, Long> deltas) {
                writeTarget().counters().increment(tool, agent, deltas);
            }
            @Override public Map<String, Map<Counter, Long>> perAgent() { return target().counters().perAgent(); }
            @Override public Map<Counter, Long> totals() { return target().counters().totals(); }
            @Override public Map<String, Map<Counter, Long>> perTool() { return target().counters().perTool(); }
            @Override public void zero() { target().counters().zero(); }
            @Override public Optional<Instant> countingSince() { return target().counters().countingSince(); }
        };
    }
    @Override
    public SessionRegistry sessions() {
        return target().sessions();
    }

    /** Reading a generation goes where reads go, advancing it where writes go, a put on condition where puts go. */
    @Override
    public WriteGenerations writeGenerations() {
        return new WriteGenerations() {
            @Override public long current(String server) { return generations(target()).current(server); }
            @Override public void advance(String server) { generations(writeTarget()).advance(server); }
            @Override
            public Optional<List<String>> putIfCurrent(CacheEntry entry, GroupBound bound, Map<String, Long> seen) {
                return putTarget().writeGenerations().putIfCurrent(entry, bound, seen);
            }
        };
    }
    @Override public Map<String, String> lastSeenVersions(String scope) { return target().lastSeenVersions(scope); }
    @Override public void recordVersions(String scope, Map<String, String> versions) {
        writeTarget().recordVersions(scope, versions);
    }

    @Override
    public FlightLease acquireFlight(String key, Duration maxHold) throws InterruptedException {
        return target().acquireFlight(key, maxHold);
    }
}
