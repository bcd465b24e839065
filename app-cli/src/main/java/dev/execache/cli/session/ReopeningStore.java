package dev.execache.cli.session;

import dev.execache.core.Glob;
import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.CacheStore;
import dev.execache.core.spi.FlightLease;
import dev.execache.core.spi.GroupBound;
import dev.execache.core.spi.SessionRegistry;
import dev.execache.core.spi.StoreCounters;
import dev.execache.core.spi.WriteGenerations;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Stands in for a store that could not be opened. Every call fails with the reason, so the
 * policy runs uncached and says why, once; at most every {@code retryEvery} a call tries to
 * open the store again, so a long-running server picks up a Redis that was down when it
 * started.
 */
public final class ReopeningStore implements CacheStore {
    private final Supplier<CacheStore> opener;
    private final Clock clock;
    private final Duration retryEvery;
    private CacheStore store;
    private String problem;
    private Instant lastAttempt;

    public ReopeningStore(Supplier<CacheStore> opener, String problem, Clock clock, Duration retryEvery) {
        this.opener = opener;
        this.problem = problem;
        this.clock = clock;
        this.retryEvery = retryEvery;
        this.lastAttempt = clock.instant();
    }

    /** A store that is never opened: every call fails with {@code reason}. */
    public static ReopeningStore never(String reason) {
        return new ReopeningStore(null, reason, Clock.systemUTC(), Duration.ZERO);
    }

    private synchronized CacheStore store() {
        if (store == null && opener != null && !clock.instant().isBefore(lastAttempt.plus(retryEvery))) {
            lastAttempt = clock.instant();
            try {
                store = opener.get();
            } catch (RuntimeException e) {
                problem = e.getMessage();
            }
        }
        if (store == null) {
            throw new IllegalStateException(problem);
        }
        return store;
    }

    @Override public Optional<CacheEntry> get(String key) { return store().get(key); }
    @Override public Optional<CacheEntry> peek(String key) { return store().peek(key); }
    @Override public List<CacheEntry> entries() { return store().entries(); }
    @Override public void put(CacheEntry entry) { store().put(entry); }
    @Override public boolean remove(String key) { return store().remove(key); }
    @Override public int removeByTool(String tool) { return store().removeByTool(tool); }
    @Override public int removeByTool(String tool, String version) { return store().removeByTool(tool, version); }
    @Override public int removeByPattern(Glob keys) { return store().removeByPattern(keys); }
    @Override public void clear() { store().clear(); }
    @Override public int size() { return store().size(); }
    @Override public long estimatedBytes() { return store().estimatedBytes(); }
    @Override public int purgeExpired() { return store().purgeExpired(); }
    @Override public List<String> put(CacheEntry entry, GroupBound bound) { return store().put(entry, bound); }
    @Override public StoreCounters counters() { return store().counters(); }
    @Override public WriteGenerations writeGenerations() { return store().writeGenerations(); }
    @Override public SessionRegistry sessions() { return store().sessions(); }
    @Override public Map<String, String> lastSeenVersions(String scope) { return store().lastSeenVersions(scope); }
    @Override public void recordVersions(String scope, Map<String, String> versions) {
        store().recordVersions(scope, versions);
    }

    @Override
    public FlightLease acquireFlight(String key, Duration maxHold) throws InterruptedException {
        return store().acquireFlight(key, maxHold);
    }

    @Override
    public synchronized void close() {
        if (store != null) {
            store.close();
        }
    }
}
