package dev.execache.store.sqlite;

import dev.execache.core.CacheStoreContract;
import dev.execache.core.MutableClock;
import dev.execache.core.spi.CacheStore;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
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

    /** Another connection rewrites the value's bytes in the file: the page stays valid, the value does not. */
    @Override
    protected void damageValue(String key, String newValue) throws Exception {
        Path file = ((SqliteCacheStore) store).file();
        try (Connection connection = DriverManager.getConnection("jdbc:sqlite:" + file);
             PreparedStatement update = connection.prepareStatement("UPDATE cache_entries SET result = ? WHERE cache_key = ?")) {
            update.setString(1, newValue);
            update.setString(2, key);
            if (update.executeUpdate() != 1) {
                throw new AssertionError("no entry " + key + " in " + file);
            }
        }
    }
}
