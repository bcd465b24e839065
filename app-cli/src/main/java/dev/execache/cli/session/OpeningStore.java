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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;

/**
 * A store opened once its process has answered its host ({@link #openInBackground}), or by the first call that needs
 * it, whichever comes first; every call waits for it. {@code serve} answers {@code initialize} without its store:
 * opening SQLite (its native library, Jdbi) took a quarter of serve's start. The opener degrades to no cache as
 * every store does ({@link ReopeningStore}); what it throws fails each call, which runs uncached.
 */
public final class OpeningStore implements CacheStore {
    private final Supplier<CacheStore> opener;
    private final CompletableFuture<CacheStore> opened = new CompletableFuture<>();
    private boolean started;

    public OpeningStore(Supplier<CacheStore> opener) {
        this.opener = opener;
    }

    /** Opens the store on a thread of its own, unless a call or {@link #close} came first. */
    public void openInBackground() {
        if (!start()) {
            return;
        }
        Thread thread = new Thread(this::open, "execache-store-open");
        thread.setDaemon(true);
        thread.start();
    }

    private synchronized boolean start() {
        boolean first = !started;
        started = true;
        return first;
    }

    private void open() {
        try {
            opened.complete(opener.get());
        } catch (RuntimeException | Error e) {
            opened.completeExceptionally(e);
        }
    }

    private CacheStore store() {
        if (start()) {
            open();
        }
        try {
            return opened.join();
        } catch (CompletionException e) {
            throw new IllegalStateException(e.getCause().getMessage(), e.getCause());
        }
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

    /** The store's sessions, reached once it is open: asking for the registry does not open it. */
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
    @Override public Map<String, String> lastSeenVersions(String scope) { return store().lastSeenVersions(scope); }
    @Override public void recordVersions(String scope, Map<String, String> versions) {
        store().recordVersions(scope, versions);
    }

    @Override
    public FlightLease acquireFlight(String key, Duration maxHold) throws InterruptedException {
        return store().acquireFlight(key, maxHold);
    }

    /** Closes the store once it is open; one never opened stays closed, and calls after fail. */
    @Override
    public void close() {
        if (start()) {
            opened.completeExceptionally(new IllegalStateException("the cache store is closed"));
            return;
        }
        try {
            opened.join().close();
        } catch (CompletionException e) {
            // it never opened: nothing to close
        }
    }
}
