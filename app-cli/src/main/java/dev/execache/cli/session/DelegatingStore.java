package dev.execache.cli.session;

import dev.execache.core.Glob;
import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.CacheStore;
import dev.execache.core.spi.FlightLease;
import dev.execache.core.spi.GroupBound;
import dev.execache.core.spi.SessionRegistry;
import dev.execache.core.spi.StoreCounters;
import dev.execache.core.spi.WriteGenerations;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A store that passes every call to the one {@link #store()} gives at that moment (which may open it, or fail with
 * why it cannot), as the stores that stand in for one not open yet do.
 */
abstract class DelegatingStore implements CacheStore {

    /** The store a call goes to; throws {@link IllegalStateException} with the reason when there is none. */
    abstract CacheStore store();

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
    @Override public Map<String, String> lastSeenVersions(String scope) { return store().lastSeenVersions(scope); }
    @Override public void recordVersions(String scope, Map<String, String> versions) {
        store().recordVersions(scope, versions);
    }

    /** The store's sessions, reached at each question: asking for the registry neither opens nor needs the store. */
    @Override
    public SessionRegistry sessions() {
        return new SessionRegistry() {
            @Override public void open(String id, String owner, Duration idleLimit) {
                store().sessions().open(id, owner, idleLimit);
            }
            @Override public Optional<String> use(String id, Duration idleLimit) {
                return store().sessions().use(id, idleLimit);
            }
            @Override public boolean end(String id) { return store().sessions().end(id); }
        };
    }

    @Override
    public FlightLease acquireFlight(String key, Duration maxHold) throws InterruptedException {
        return store().acquireFlight(key, maxHold);
    }
}
