package dev.execache.core.spi;

import dev.execache.core.Glob;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Where results are kept. Implementations are safe to use from many threads; persistent
 * and shared ones also from many processes. Every rule here is stated as a test in
 * {@code CacheStoreContract}.
 *
 * <p>A store is bounded: it holds at most the number of entries it was built with, and
 * one more evicts the least recently used (a {@link #get} counts as a use). An entry past
 * its {@link CacheEntry#expiresAt()} is never returned and is purged.
 */
public interface CacheStore extends AutoCloseable {

    /**
     * The live entry under {@code key}, with its hit count raised by one and its recency
     * refreshed; empty if absent or expired (an expired entry is removed and counted as an
     * expiration).
     */
    Optional<CacheEntry> get(String key);

    /** Like {@link #get} but neither counts a hit nor refreshes recency. */
    Optional<CacheEntry> peek(String key);

    /** Inserts or replaces the entry under its key, evicting the least recently used past the bound. */
    void put(CacheEntry entry);

    /**
     * Every live entry (expired ones are left out), each as {@link #peek} gives it: listing
     * neither counts hits nor refreshes recency. At most the store's bound of them.
     */
    List<CacheEntry> entries();

    /**
     * Like {@link #put(CacheEntry)}, and the entry joins {@code bound}'s group: past the group's
     * own bound, the group's least recently used entries are evicted (and counted as evictions).
     * An entry leaves its group whenever it leaves the store (removed, cleared, invalidated,
     * expired, evicted), so the group's count is always exact.
     *
     * @return the keys evicted to keep the group's bound, eldest first
     */
    List<String> put(CacheEntry entry, GroupBound bound);

    /** @return whether an entry was removed */
    boolean remove(String key);

    /** Removes every entry whose tool versions name {@code tool}, whatever its version; returns how many. */
    int removeByTool(String tool);

    /**
     * Removes every entry made with {@code version} of {@code tool} (its tool versions map the tool
     * to that version); entries made with any other version of it stay. Returns how many.
     */
    int removeByTool(String tool, String version);

    /** Removes every entry whose key matches {@code keys}; returns how many. */
    int removeByPattern(Glob keys);

    /** Removes every entry. Counters and last-seen versions stay. */
    void clear();

    /** Live entries (expired ones are purged first). */
    int size();

    /** An estimate of the bytes the entries take. */
    long estimatedBytes();

    /** Removes every expired entry; returns how many. */
    int purgeExpired();

    /** The figures the store keeps beside its entries (fleet-wide for a shared store). */
    StoreCounters counters();

    /**
     * The write generation of each server (fleet-wide for a shared store): what keeps a read
     * that raced a write from being stored.
     */
    WriteGenerations writeGenerations();

    /**
     * The sessions of the MCP HTTP service that this store keeps (fleet-wide for a shared store), so that
     * every instance of a fleet knows which session ids are open and whose.
     */
    SessionRegistry sessions();

    /**
     * The version of each tool as last recorded in {@code scope}. A scope is one project's view
     * of its tools (the CLI uses the config file's real path): projects that share a store with
     * different versions of a tool each compare against their own, so they never invalidate each
     * other. {@link #DEFAULT_SCOPE} is the scope of a caller that names none.
     */
    Map<String, String> lastSeenVersions(String scope);

    /** Records these tools' versions in {@code scope}, keeping those of other tools and of other scopes. */
    void recordVersions(String scope, Map<String, String> versions);

    /** The scope of a caller that names none (and of versions recorded before scopes existed). */
    String DEFAULT_SCOPE = "";

    /**
     * Waits until no one else in the fleet holds the flight for {@code key} and takes it,
     * for at most {@code maxHold} (after which it lapses, so a dead holder never blocks
     * others for longer). A waiter waits long enough to outlast a lapsing lease; it gets
     * {@link FlightLease#LOCAL} when it gave up waiting. Stores used by one process only need
     * not coordinate.
     */
    default FlightLease acquireFlight(String key, Duration maxHold) throws InterruptedException {
        return FlightLease.LOCAL;
    }

    @Override
    default void close() {
    }
}
