package dev.execache.store.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.core.CacheStoreContract;
import dev.execache.core.MutableClock;
import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.CacheStore;
import dev.execache.core.spi.Counter;
import java.lang.reflect.Field;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

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
        Map<String, Object> slots = (Map<String, Object>) field.get(store);
        synchronized (store) {
            Object slot = slots.get(key);
            Field held = slot.getClass().getDeclaredField("entry");
            held.setAccessible(true);
            CacheEntry entry = (CacheEntry) held.get(slot);
            held.set(slot, new CacheEntry(key, newValue, entry.console(), entry.executionTime(), entry.toolVersions(),
                    entry.createdAt(), entry.expiresAt(), entry.hits(), entry.label(), entry.checksum()));
        }
    }

    private static CacheEntry sized(String key, int valueChars) {
        Instant now = Instant.parse("2026-01-01T00:00:00Z");
        return new CacheEntry(key, "\"" + "x".repeat(valueChars) + "\"", "", Duration.ofMillis(10), Map.of(), now,
                now.plus(Duration.ofMinutes(5)), 0);
    }

    @Test
    void bytesAreBoundedAsWellAsEntriesAndTheLeastRecentlyUsedGoFirst() {
        CacheEntry probe = sized("v1:probe", 10_000);
        long oneEntry = probe.estimatedBytes();
        MemoryCacheStore store = new MemoryCacheStore(100, oneEntry * 3, new MutableClock(Instant.parse("2026-01-01T00:00:00Z")));
        store.put(sized("v1:a", 10_000));
        store.put(sized("v1:b", 10_000));
        store.put(sized("v1:c", 10_000));
        store.get("v1:a");

        store.put(sized("v1:d", 10_000));

        assertThat(store.estimatedBytes()).isLessThanOrEqualTo(oneEntry * 3);
        assertThat(store.peek("v1:b")).isEmpty();
        assertThat(store.peek("v1:a")).isPresent();
        assertThat(store.peek("v1:d")).isPresent();
        assertThat(store.counters().totals().get(Counter.EVICTIONS)).isEqualTo(1);
    }

    @Test
    void anEntryLargerThanTheWholeByteBoundIsNotKeptAndEvictsNothing() {
        MemoryCacheStore store = new MemoryCacheStore(100, 50_000, new MutableClock(Instant.parse("2026-01-01T00:00:00Z")));
        store.put(sized("v1:small", 100));

        store.put(sized("v1:huge", 100_000));

        assertThat(store.peek("v1:huge")).isEmpty();
        assertThat(store.peek("v1:small")).isPresent();
        assertThat(store.estimatedBytes()).isLessThanOrEqualTo(50_000);
    }

    @Test
    void aByteBoundBelowOneIsRefusedByName() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new MemoryCacheStore(10, 0, Clock.systemUTC()))
                .hasMessageContaining("maxBytes");
    }
}
