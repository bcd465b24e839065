package dev.execache.cli.output;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.cli.settings.Durations;
import dev.execache.cli.settings.Redaction;
import dev.execache.cli.settings.Settings;
import dev.execache.cli.settings.StoreKind;
import dev.execache.store.memory.MemoryCacheStore;
import java.time.Duration;

/**
 * Which store a command uses, where it is and its limits, as {@code stats}, {@code cache_stats}
 * and the MBean show them.
 *
 * @param location the file, the Redis URL without its password, or "this process only"
 * @param maxBytes the store's bound on estimated bytes, or null when only entries are bounded
 */
public record StoreDescription(StoreKind kind, String location, int maxEntries, Long maxBytes, Duration defaultTtl) {

    public static StoreDescription of(Settings settings) {
        return new StoreDescription(settings.store(), switch (settings.store()) {
            case SQLITE -> settings.sqlitePath().toString();
            case REDIS -> Redaction.redactUrl(settings.redisUrl());
            case MEMORY -> "this process only";
        }, settings.policy().maxEntries(), settings.store() == StoreKind.MEMORY ? MemoryCacheStore.DEFAULT_MAX_BYTES : null,
                settings.policy().ttl());
    }

    /** {@code at most 100 entries, no byte bound, entries kept 5m unless a rule says otherwise}. */
    public String limits() {
        return "at most " + maxEntries + (maxEntries == 1 ? " entry" : " entries") + ", "
                + (maxBytes == null ? "no byte bound" : "at most " + Output.bytes(maxBytes)) + ", kept "
                + Durations.format(defaultTtl) + " unless a rule says otherwise";
    }

    public void putInto(ObjectNode node) {
        node.put("store", kind.toString());
        node.put("location", location);
        ObjectNode limits = node.putObject("limits");
        limits.put("maxEntries", maxEntries);
        if (maxBytes == null) {
            limits.putNull("maxBytes");
        } else {
            limits.put("maxBytes", maxBytes);
        }
        limits.put("ttlSeconds", defaultTtl.toSeconds());
    }
}
