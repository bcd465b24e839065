package dev.execache.store.sqlite;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What reads noted and no write has written yet: the uses of entries, the counts, the expired
 * entries met. Not changed once a write took it (reads go on adding to a new one while that write
 * is under way); changed only holding {@link WriteBehind}'s lock.
 */
final class Unwritten {
    static final Unwritten NONE = new Unwritten();

    /** By key, in order of use, the oldest first; the use is of the entry made at {@code createdAt}. */
    final LinkedHashMap<String, PendingUse> uses = new LinkedHashMap<>();
    /** By counter row name. */
    final Map<String, Long> counts = new LinkedHashMap<>();
    /** Expired entries reads met, by key: when the one met was made (not one put since). */
    final Map<String, Long> expired = new LinkedHashMap<>();
    long firstAt;

    /** The uses of the entry made at {@code createdAt}: how many hits, the recency with them. */
    record PendingUse(long createdAt, long hits) {
    }

    boolean isEmpty() {
        return uses.isEmpty() && counts.isEmpty() && expired.isEmpty();
    }

    void noteFirst(long now) {
        if (isEmpty()) {
            firstAt = now;
        }
    }

    long hits(String key, long createdAt) {
        PendingUse use = uses.get(key);
        return use != null && use.createdAt() == createdAt ? use.hits() : 0;
    }

    /** This, which a write failed to write, with what was noted since, to be written next. */
    Unwritten followedBy(Unwritten later) {
        Unwritten merged = new Unwritten();
        merged.firstAt = isEmpty() ? later.firstAt : later.isEmpty() ? firstAt : Math.min(firstAt, later.firstAt);
        merged.uses.putAll(uses);
        later.uses.forEach((key, use) -> merged.uses.merge(key, use, (older, newer) ->
                older.createdAt() == newer.createdAt() ? new PendingUse(newer.createdAt(), older.hits() + newer.hits())
                        : newer));
        merged.counts.putAll(counts);
        later.counts.forEach((name, delta) -> merged.counts.merge(name, delta, Long::sum));
        merged.expired.putAll(expired);
        later.expired.forEach(merged.expired::putIfAbsent);
        return merged;
    }
}
