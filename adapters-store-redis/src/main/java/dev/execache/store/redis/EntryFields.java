package dev.execache.store.redis;

import dev.execache.core.spi.CacheEntry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * An entry as the scripts hold it: the arguments {@link Scripts#PUT} writes it from, the fields
 * {@link Scripts#GET} gives back, in its order, and what a fleet key's signature covers, one list
 * for signing and for checking.
 */
final class EntryFields {
    // the order of Scripts.GET's HMGET: expires, hits, value, console, exec, created, tools, sum, label, sig
    private static final int EXPIRES = 0;
    private static final int HITS = 1;
    private static final int VALUE = 2;
    private static final int CONSOLE = 3;
    private static final int EXEC = 4;
    private static final int CREATED = 5;
    private static final int TOOLS = 6;
    private static final int SUM = 7;
    private static final int LABEL = 8;
    private static final int SIGNATURE = 9;

    private EntryFields() {
    }

    /**
     * Whether {@code fields}, as {@link Scripts#GET} returned them, are a live entry: Redis ends the
     * list at the first field missing, so an entry written before labels has no label (nor a signature).
     */
    static boolean isEntry(List<Object> fields) {
        return fields.size() >= Scripts.ENTRY_FIELD_COUNT - 2;
    }

    static CacheEntry entry(String key, List<Object> fields) {
        return new CacheEntry(
                key,
                field(fields, VALUE),
                field(fields, CONSOLE),
                Duration.ofNanos(Long.parseLong(field(fields, EXEC))),
                ToolVersions.decode(field(fields, TOOLS)),
                Instant.ofEpochMilli(Long.parseLong(field(fields, CREATED))),
                Instant.ofEpochMilli(Long.parseLong(field(fields, EXPIRES))),
                Long.parseLong(field(fields, HITS)),
                field(fields, LABEL),
                Long.parseLong(field(fields, SUM)));
    }

    /** The signature stored with the entry; null for none. */
    static String signature(List<Object> fields) {
        return field(fields, SIGNATURE);
    }

    /** What the signature of the entry read as {@code fields} covers. */
    static List<String> signed(String key, List<Object> fields) {
        return signed(key, field(fields, VALUE), field(fields, CONSOLE), field(fields, EXEC), field(fields, CREATED),
                field(fields, EXPIRES), field(fields, TOOLS), field(fields, SUM), field(fields, LABEL));
    }

    /** What the signature of {@code entry} covers. */
    static List<String> signed(CacheEntry entry) {
        return signed(entry.key(), entry.value(), entry.console(), Long.toString(entry.executionTime().toNanos()),
                Long.toString(entry.createdAt().toEpochMilli()), Long.toString(entry.expiresAt().toEpochMilli()),
                ToolVersions.encode(entry.toolVersions()), Long.toString(entry.checksum()), entry.label());
    }

    /** The key and every field written with the entry, all but the hit count. */
    private static List<String> signed(String key, String value, String console, String exec, String created,
            String expires, String tools, String sum, String label) {
        return List.of(key, value, console, exec, created, expires, tools, sum, label == null ? "" : label);
    }

    /**
     * The arguments of {@link Scripts#PUT} (see there) after the partition's own.
     *
     * @param ttl Redis's TTL of the entry, ms
     * @param share the partition's share of the store's bound
     * @param group the bound group, '' for none
     * @param groupShare the partition's share of the group's bound, 0 for none
     * @param signature '' for none
     * @param seen the write generations the entry was read at, as JSON; '' for none
     */
    static Object[] putArguments(CacheEntry entry, long ttl, int share, String group, int groupShare, String signature,
            String seen) {
        List<Object> args = new ArrayList<>(20 + entry.toolVersions().size());
        args.add(entry.key());
        args.add(Long.toString(ttl));
        args.add(Long.toString(entry.expiresAt().toEpochMilli()));
        args.add(Long.toString(entry.estimatedBytes()));
        args.add(Integer.toString(share));
        args.add(entry.value());
        args.add(entry.console());
        args.add(Long.toString(entry.executionTime().toNanos()));
        args.add(Long.toString(entry.createdAt().toEpochMilli()));
        args.add(group);
        args.add(Integer.toString(groupShare));
        args.add(Long.toString(entry.checksum()));
        args.add(ToolVersions.encode(entry.toolVersions()));
        args.add(entry.label());
        args.add(signature);
        args.add(seen);
        args.addAll(entry.toolVersions().keySet());
        return args.toArray();
    }

    private static String field(List<Object> fields, int index) {
        return fields.size() > index ? (String) fields.get(index) : null;
    }
}
