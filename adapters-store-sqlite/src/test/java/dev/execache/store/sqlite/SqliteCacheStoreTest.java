package dev.execache.store.sqlite;

import dev.execache.core.CacheStore;
import dev.execache.core.CacheStoreContract;
import dev.execache.core.MutableClock;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.io.TempDir;

class SqliteCacheStoreTest extends CacheStoreContract {
    @TempDir
    Path directory;

    private final AtomicInteger files = new AtomicInteger();

    @Override
    protected CacheStore createStore(int maxEntries, MutableClock clock) {
        return new SqliteCacheStore(directory.resolve("cache-" + files.incrementAndGet() + ".db"), maxEntries, clock);
    }
}
