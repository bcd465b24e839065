package dev.execache.store.redis;

import java.util.List;

/**
 * Where a store keeps what, every key under one prefix {@code P}:
 *
 * <ul>
 *   <li>{@code P e:<key>}: one hash per entry (value, console, exec, created, expires, hits,
 *       tools, label), with a Redis TTL at its expiry;
 *   <li>{@code P lru}: sorted set of keys scored by a sequence number taken at each use, for recency;
 *   <li>{@code P exp}: sorted set of keys scored by expiry (epoch ms), to purge in order;
 *   <li>{@code P meta}: hash of key to its estimated bytes and tool names, so that an entry which
 *       Redis has already expired can still be taken out of every index;
 *   <li>{@code P t:<tool>}: set of the keys that depend on a tool;
 *   <li>{@code P bytes}, {@code P seq}: the estimated bytes of all entries, the recency sequence;
 *   <li>{@code P counters}: hash of counters (a tool's own under {@code tool:<COUNTER>:<tool>});
 *   <li>{@code P versions}, {@code P versions:<scope>}: hashes of the last-seen tool versions of
 *       the default scope (and of every version recorded before scopes existed) and of each other;
 *   <li>{@code P groups}, {@code P gsizes}: hashes of key to its bound group, and of group to
 *       how many entries it has (see {@code CacheStore#put(CacheEntry, GroupBound)});
 *   <li>{@code P f:<key>}: the flight lock of a key (a Redisson {@code RLock}).
 * </ul>
 *
 * {@code lru}, {@code exp} and {@code meta} always name the same keys, at most the bound, and
 * the tool sets only those: the store never holds more than about the bound's worth.
 */
record KeyLayout(String prefix) {

    String lru() {
        return prefix + "lru";
    }

    String bytes() {
        return prefix + "bytes";
    }

    String counters() {
        return prefix + "counters";
    }

    String versions(String scope) {
        return scope.isEmpty() ? prefix + "versions" : prefix + "versions:" + scope;
    }

    String entry(String key) {
        return prefix + "e:" + key;
    }

    String tool(String tool) {
        return prefix + "t:" + tool;
    }

    String flight(String key) {
        return prefix + "f:" + key;
    }

    /** The keys every script but {@link Scripts#GET} gets, in the order they read them. */
    List<Object> scriptKeys() {
        return List.of(lru(), prefix + "exp", meta(), bytes(), seq(), counters(), prefix + "groups", prefix + "gsizes");
    }

    /** The keys {@link Scripts#GET} gets for {@code key}. */
    List<Object> getKeys(String key) {
        return List.of(entry(key), lru(), seq(), meta());
    }

    private String meta() {
        return prefix + "meta";
    }

    private String seq() {
        return prefix + "seq";
    }
}
