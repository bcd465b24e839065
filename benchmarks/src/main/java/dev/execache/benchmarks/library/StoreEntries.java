package dev.execache.benchmarks.library;

import dev.execache.core.spi.CacheEntry;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/** What the store figures read: a result of eight rows, as a query tool's answer would be. */
final class StoreEntries {
    static final String JSON_ROWS = "{\"rows\":[" + "{\"id\":1,\"name\":\"a row of a result\"},".repeat(8) + "{}]}";

    private StoreEntries() {
    }

    /** An entry of {@link #JSON_ROWS} under {@code key}, stored now and kept an hour. */
    static CacheEntry rows(String key) {
        Instant now = Instant.now();
        return new CacheEntry(key, JSON_ROWS, "", Duration.ofMillis(800), Map.of("github", "v1"), now,
                now.plus(Duration.ofHours(1)), 0);
    }
}
