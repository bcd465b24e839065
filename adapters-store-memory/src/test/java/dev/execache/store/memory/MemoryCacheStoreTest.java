package dev.execache.store.memory;
import dev.execache.core.CacheEntry;
import dev.execache.core.CacheStore;
import dev.execache.core.CacheStoreContract;
import dev.execache.core.MutableClock;
import java.lang.reflect.Field;
import java.util.Map;

class MemoryCacheStoreTest extends CacheStoreContract {
    @Override
    protected CacheStore createStore(int maxEntries, MutableClock clock) {
        return new MemoryCacheStore(maxEntries, clock);
    }

    /** Memory has no file to damage: the entry is swapped for one with another value and the old checksum. */
    @Override
    @SuppressWarnings("unchecked")
    protected void damageValue(String key, String newValue) throws Exception {
        Field field = MemoryCacheStore.class.getDeclaredField("entries");
        field.setAccessible(true);
        Map<String, CacheEntry> entries = (Map<String, CacheEntry>) field.get(store);
        synchronized (store) {
            CacheEntry entry = entries.get(key);
            entries.put(key, new CacheEntry(key, newValue, entry.console(), entry.executionTime(), entry.toolVersions(),
                    entry.createdAt(), entry.expiresAt(), entry.hits(), entry.checksum()));
        }
    }
}
