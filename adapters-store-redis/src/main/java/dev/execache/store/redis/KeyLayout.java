package dev.execache.store.redis;

import java.util.List;

/**
 * Where a store keeps what. Every key of a store starts with {@code P = "{" + keyPrefix + "}2:"}:
 * the braces make the whole prefix Redis Cluster's hash tag, so every key of one store (one
 * prefix) is in one hash slot, and a script that touches several of them runs on one node
 * (Cluster refuses a script whose keys span slots); {@code 2} is the layout's version (the first
 * layout, {@code keyPrefix} without braces or version, is never read).
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
 *   <li>{@code P f:<key>}: the flight of a key: its holder's random token, with the lease as TTL;
 *   <li>{@code P writes}: hash of server name to its write generation (see {@code WriteGenerations}).
 * </ul>
 *
 * {@code lru}, {@code exp} and {@code meta} always name the same keys, at most the bound, and
 * the tool sets only those: the store never holds more than about the bound's worth.
 */
record KeyLayout(String prefix) {
    /** Bumped whenever what is kept where changes, so a store never reads another layout's keys. */
    static final int VERSION = 2;

    /** What every key of the store starts with. */
    String root() {
        return "{" + prefix + "}" + VERSION + ":";
    }

    /** A SCAN/KEYS pattern matching every key of the store. */
    String pattern() {
        return root().replaceAll("([\\[\\]*?\\\\])", "\\\\$1") + "*";
    }

    String lru() {
        return root() + "lru";
    }

    String bytes() {
        return root() + "bytes";
    }

    String counters() {
        return root() + "counters";
    }

    String versions(String scope) {
        return scope.isEmpty() ? root() + "versions" : root() + "versions:" + scope;
    }

    String entry(String key) {
        return root() + "e:" + key;
    }

    String tool(String tool) {
        return root() + "t:" + tool;
    }

    String writes() {
        return root() + "writes";
    }

    String flight(String key) {
        return root() + "f:" + key;
    }

    /** The keys every script but {@link Scripts#GET} gets, in the order they read them. */
    List<Object> scriptKeys() {
        return List.of(lru(), root() + "exp", meta(), bytes(), seq(), counters(), root() + "groups", root() + "gsizes",
                writes());
    }

    /** The keys {@link Scripts#GET} gets for {@code key}. */
    List<Object> getKeys(String key) {
        return List.of(entry(key), lru(), seq(), meta());
    }

    private String meta() {
        return root() + "meta";
    }

    private String seq() {
        return root() + "seq";
    }
}
