package dev.execache.store.memory;

import dev.execache.core.CacheStore;
import dev.execache.core.CacheStoreContract;
import dev.execache.core.MutableClock;

class MemoryCacheStoreTest extends CacheStoreContract {
    @Override
    protected CacheStore createStore(int maxEntries, MutableClock clock) {
        return new MemoryCacheStore(maxEntries, clock);
    }
}
