package dev.execache.store.sqlite;

import dev.execache.core.MutableClock;
import dev.execache.core.spi.CacheEntry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/** A process's first use of the driver: opens the cache at {@code args[0]}, writes one entry and reads it. */
public final class FirstRunWorker {
    private FirstRunWorker() {
    }

    public static void main(String[] args) {
        MutableClock clock = new MutableClock();
        try (SqliteCacheStore store = new SqliteCacheStore(Path.of(args[0]), 10, clock)) {
            store.put(new CacheEntry("v1:first", "1", "", Duration.ofMillis(1), Map.of(), clock.instant(),
                    clock.instant().plusSeconds(60), 0));
            System.out.println(store.get("v1:first").map(CacheEntry::value).orElse("missing"));
        }
    }
}
