package dev.execache.store.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32;
import org.redisson.connection.CRC16;

/**
 * Where a store keeps what. One cache is spread over a fixed number of partitions, each with its
 * own Redis Cluster hash tag: every key of partition {@code i} starts with {@code P = "{" + tag(i)
 * + "}:"}, so the keys of one partition are in one hash slot (a script that touches several runs
 * on one node: Cluster refuses a script whose keys span slots), and the partitions' slots lie
 * spread evenly over the 16,384 slots, so that a Cluster whose masters own even ranges of slots
 * (as {@code redis-cli --cluster create} makes them) holds an even share of the partitions. Each
 * tag is {@code prefix + "3p" + i}, with {@code ".k"} after it for the first k that puts its slot
 * in the i-th of the partitions' even slices of the slot range; {@code 3} is the layout's version
 * (the layouts before, {@code {prefix}2:} and {@code prefix} alone, are never read).
 *
 * <p>An entry's partition follows from its key ({@link #partitionOf}). A store uses
 * {@link #used()} of the partitions, spread over all of them: as many as give each partition at
 * least {@link #MIN_SHARE} entries of the bound, so that a small bound stays one exact LRU.
 * Whatever a store uses, removals and figures reach every partition, so that stores with other
 * bounds on one cache never leave an entry behind.
 *
 * <p>In each partition:
 * <ul>
 *   <li>{@code P e:<key>}: one hash per entry (value, console, exec, created, expires, hits,
 *       tools, label), with a Redis TTL at its expiry;
 *   <li>{@code P lru}: sorted set of keys scored by a sequence number taken at each use, for recency;
 *   <li>{@code P exp}: sorted set of keys scored by expiry (epoch ms), to purge in order;
 *   <li>{@code P meta}: hash of key to its estimated bytes and tool names, so that an entry which
 *       Redis has already expired can still be taken out of every index;
 *   <li>{@code P t:<tool>}: set of the keys that depend on a tool;
 *   <li>{@code P bytes}, {@code P seq}: the estimated bytes of the partition's entries, the recency sequence;
 *   <li>{@code P counters}: hash of counters (a tool's own under {@code tool:<COUNTER>:<tool>}); the
 *       store's figures are their sums over the partitions;
 *   <li>{@code P groups}, {@code P gsizes}: hashes of key to its bound group, and of group to
 *       how many entries it has in the partition (see {@code CacheStore#put(CacheEntry, GroupBound)});
 *   <li>{@code P f:<key>}: the flight of a key: its holder's random token, with the lease as TTL;
 *   <li>{@code P writes}: hash of server name to its write generation (see {@code WriteGenerations}),
 *       kept alike in every partition, so that a put checks it in the same script.
 * </ul>
 * Partition 0 also holds {@code P versions} and {@code P versions:<scope>}, the last-seen tool
 * versions of the default scope (and of every version recorded before scopes existed) and of each other.
 *
 * <p>{@code lru}, {@code exp} and {@code meta} always name the same keys, at most the partition's
 * share of the bound, and the tool sets only those: the store never holds more than about the
 * bound's worth.
 *
 */
final class KeyLayout {
    /** Bumped whenever what is kept where changes, so a store never reads another layout's keys. */
    static final int VERSION = 3;
    /** A partition holds at least this many entries of the bound: below it, fewer partitions are used. */
    static final int MIN_SHARE = 8;
    static final int MAX_PARTITIONS = 1024;
    private static final int SLOTS = 16384;

    private final String prefix;
    private final int partitions;
    private final int used;
    /** Every partition, its tag found once: finding one takes about {@code partitions} checksums. */
    private final Partition[] all;
    /** For each partition, its rank among the used ones, or -1 for one this store puts nothing in. */
    private final int[] usedRank;

    KeyLayout(String prefix, int partitions, int used) {
        if (prefix == null || prefix.isEmpty()) {
            throw new IllegalArgumentException("keyPrefix must not be empty");
        }
        if (prefix.contains("{") || prefix.contains("}")) {
            throw new IllegalArgumentException("keyPrefix must not contain { or }: execache puts its own hash tags"
                    + " around it (" + prefix + ")");
        }
        if (partitions < 1 || partitions > MAX_PARTITIONS) {
            throw new IllegalArgumentException("partitions must be between 1 and " + MAX_PARTITIONS + ": " + partitions);
        }
        if (used < 1 || used > partitions) {
            throw new IllegalArgumentException("used partitions must be between 1 and " + partitions + ": " + used);
        }
        this.prefix = prefix;
        this.partitions = partitions;
        this.used = used;
        this.all = new Partition[partitions];
        for (int i = 0; i < partitions; i++) {
            all[i] = new Partition(i, "{" + tag(i) + "}:");
        }
        this.usedRank = new int[partitions];
        Arrays.fill(usedRank, -1);
        for (int j = 0; j < used; j++) {
            usedRank[j * partitions / used] = j;
        }
    }

    String prefix() {
        return prefix;
    }

    int partitions() {
        return partitions;
    }

    int used() {
        return used;
    }

    /** Every partition of the cache, whether this store puts entries there or not. */
    List<Partition> all() {
        return List.of(all);
    }

    /** The layout a store with this bound uses: see {@link #MIN_SHARE}. */
    static KeyLayout of(String prefix, int partitions, int maxEntries) {
        return new KeyLayout(prefix, partitions, Math.max(1, Math.min(partitions, maxEntries / MIN_SHARE)));
    }

    /** With the default partitions and bound, for tests that look at what a default store wrote. */
    static KeyLayout of(String prefix) {
        return of(prefix, RedisStoreSettings.DEFAULT_PARTITIONS, RedisStoreSettings.DEFAULT_MAX_ENTRIES);
    }

    /** The partitions entries go to, spread over all of them. */
    List<Partition> usedPartitions() {
        List<Partition> usedOnes = new ArrayList<>(used);
        for (int j = 0; j < used; j++) {
            usedOnes.add(all[j * partitions / used]);
        }
        return usedOnes;
    }

    /** The partition of an entry, from its key: the same in every process of the fleet. */
    int partitionOf(String key) {
        CRC32 crc = new CRC32();
        crc.update(key.getBytes(StandardCharsets.UTF_8));
        return (int) (crc.getValue() % used) * partitions / used;
    }

    /**
     * The share of {@code bound} that the used partition {@code partition} holds: the shares of
     * the used partitions add up to the bound, each at least 1; the remainder goes to the
     * partitions after the one {@code rotation} names, so that several groups do not all favour partition 0.
     */
    int share(int bound, int partition, int rotation) {
        int rank = Math.floorMod(usedRank[partition] - rotation, used);
        return Math.max(1, bound / used + (rank < bound % used ? 1 : 0));
    }

    Partition partition(int index) {
        return all[index];
    }

    /**
     * The tag of partition {@code index}: the first of {@code prefix + "3p" + index} and its
     * variants {@code .1, .2, ...} whose slot is in the partition's slice of the slot range.
     */
    String tag(int index) {
        int from = SLOTS * index / partitions;
        int to = SLOTS * (index + 1) / partitions;
        String base = prefix + VERSION + "p" + index;
        for (int k = 0; ; k++) {
            String tag = k == 0 ? base : base + "." + k;
            int slot = slot(tag);
            if (slot >= from && slot < to) {
                return tag;
            }
        }
    }

    /** Redis Cluster's slot of a key with this hash tag. */
    static int slot(String tag) {
        return CRC16.crc16(tag.getBytes(StandardCharsets.UTF_8)) % SLOTS;
    }

    /** A SCAN/KEYS pattern matching every key of every partition of the cache. */
    String pattern() {
        return escape("{" + prefix + VERSION + "p") + "*";
    }

    /** A SCAN/KEYS pattern matching every entry's hash, in every partition. */
    String entryPattern() {
        return pattern() + "}:e:*";
    }

    /** What the keys of the layout before this one started with: {@code {prefix}2:}. */
    String previousRoot() {
        return "{" + prefix + "}2:";
    }

    /** A SCAN/KEYS pattern matching every key of the layout before this one. */
    String previousPattern() {
        return escape(previousRoot()) + "*";
    }

    private static String escape(String text) {
        return text.replaceAll("([\\[\\]*?\\\\])", "\\\\$1");
    }

    /** The keys of one partition; {@code root} is what every one of them starts with. */
    record Partition(int index, String root) {
        String lru() {
            return root + "lru";
        }

        String bytes() {
            return root + "bytes";
        }

        String counters() {
            return root + "counters";
        }

        String versions(String scope) {
            return scope.isEmpty() ? root + "versions" : root + "versions:" + scope;
        }

        String entry(String key) {
            return root + "e:" + key;
        }

        String tool(String tool) {
            return root + "t:" + tool;
        }

        String writes() {
            return root + "writes";
        }

        String flight(String key) {
            return root + "f:" + key;
        }

        String meta() {
            return root + "meta";
        }

        /** An open session of the HTTP service: {@code EXPIRES_AT OWNER}, see {@link Scripts#USE_SESSION}. */
        String session(String id) {
            return root + "s:" + id;
        }

        /** The keys every script but {@link Scripts#GET} gets, in the order they read them. */
        List<Object> scriptKeys() {
            return List.of(lru(), root + "exp", meta(), bytes(), seq(), counters(), root + "groups", root + "gsizes",
                    writes());
        }

        /** The keys {@link Scripts#GET} gets for {@code key}. */
        List<Object> getKeys(String key) {
            return List.of(entry(key), lru(), seq(), meta());
        }

        private String seq() {
            return root + "seq";
        }
    }

    /** The partition of {@code key}'s entry. */
    Partition partitionFor(String key) {
        return partition(partitionOf(key));
    }

    /** The entry of {@code key} in its partition: for tests and tools that look at what a store wrote. */
    String entry(String key) {
        return partitionFor(key).entry(key);
    }

    /** The flight of {@code key} in its partition. */
    String flight(String key) {
        return partitionFor(key).flight(key);
    }
}
