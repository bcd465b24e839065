package dev.execache.core.spi;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Per server, a count kept by the store of the starts and ends of calls that may write to it
 * (its write generation): fleet-wide on a shared store, so that a read through one instance
 * learns of a write through another. Behind {@link CacheStore#writeGenerations()}.
 *
 * <p>How a read is kept from going stale (the argument, shared by every store): a call that may
 * write to server S advances S's generation when it starts and again when it ends, and then
 * removes S's cached reads (and the runs that used them). A read of S notes S's generation
 * before it asks S, and is stored with {@link #putIfCurrent}, which stores nothing if the
 * generation moved, atomically with the put (no advance can fall between the check and the put).
 * So a read that overlapped a write is either refused (its put came after the write's end) or
 * was stored before the write's end and is removed by the write's removal, which comes after
 * that end. A hit of a read between its put and that removal meets a write still in flight,
 * which may return either answer. The generation only grows: a clear or a zeroing of the
 * counters keeps it, so that a noted value is never met again.
 */
public interface WriteGenerations {

    /** The server's generation now; 0 if no write was counted. */
    long current(String server);

    /** Counts one start or end of a call that may write to {@code server}. */
    void advance(String server);

    /**
     * As {@link CacheStore#put(CacheEntry, GroupBound)} (or {@link CacheStore#put(CacheEntry)}
     * when {@code bound} is null), only if the generation of every server in {@code seen} is
     * still the one given; checked atomically with the put. When one moved, nothing changes.
     *
     * @return the keys evicted to keep the group's bound, or empty if a generation moved
     */
    Optional<List<String>> putIfCurrent(CacheEntry entry, GroupBound bound, Map<String, Long> seen);

    /**
     * Generations kept in this process, for a store that lives in one process: each operation holds {@code lock}, the
     * lock the store's own puts hold, so that a put on condition and an advance never interleave.
     */
    static WriteGenerations inProcess(Object lock, CacheStore store) {
        Map<String, Long> generations = new HashMap<>();
        return new WriteGenerations() {
            @Override
            public long current(String server) {
                synchronized (lock) {
                    return generations.getOrDefault(server, 0L);
                }
            }

            @Override
            public void advance(String server) {
                synchronized (lock) {
                    generations.merge(server, 1L, Long::sum);
                }
            }

            @Override
            public Optional<List<String>> putIfCurrent(CacheEntry entry, GroupBound bound, Map<String, Long> seen) {
                synchronized (lock) {
                    for (Map.Entry<String, Long> noted : seen.entrySet()) {
                        if (generations.getOrDefault(noted.getKey(), 0L).longValue() != noted.getValue()) {
                            return Optional.empty();
                        }
                    }
                    if (bound == null) {
                        store.put(entry);
                        return Optional.of(List.of());
                    }
                    return Optional.of(store.put(entry, bound));
                }
            }
        };
    }
}
