package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.execache.cli.session.OpeningStore;
import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.CacheStore;
import dev.execache.store.sqlite.SqliteCacheStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** serve's store: opened after its first answer, or by the first call, and then the store every call uses. */
class OpeningStoreTest {
    @TempDir
    Path home;

    private final AtomicInteger opened = new AtomicInteger();

    private CacheStore sqlite() {
        opened.incrementAndGet();
        return new SqliteCacheStore(home.resolve("cache.db"), 100, Clock.systemUTC());
    }

    private static CacheEntry entry(String key) {
        Instant now = Instant.now();
        return new CacheEntry(key, "1", "", Duration.ofMillis(40), Map.of(), now, now.plus(Duration.ofHours(1)), 0);
    }

    @Test
    void opensNothingUntilAskedThenOnceInTheBackground() {
        OpeningStore store = new OpeningStore(this::sqlite);
        assertThat(opened).hasValue(0);
        assertThat(home.resolve("cache.db")).doesNotExist();

        store.openInBackground();
        store.openInBackground();

        await().until(() -> Files.exists(home.resolve("cache.db")));
        store.put(entry("v1:a"));
        assertThat(store.get("v1:a")).isPresent();
        assertThat(opened).hasValue(1);
        store.close();
        try (CacheStore again = sqlite()) {
            assertThat(again.peek("v1:a")).as("written to the file the store opened").isPresent();
        }
    }

    @Test
    void theFirstCallOpensItWhenNothingDidBefore() {
        OpeningStore store = new OpeningStore(this::sqlite);

        store.put(entry("v1:b"));

        assertThat(store.size()).isEqualTo(1);
        store.openInBackground();
        assertThat(opened).as("opened by the call, not again").hasValue(1);
        store.close();
    }

    @Test
    void closedBeforeItOpenedItNeverOpens() {
        OpeningStore store = new OpeningStore(this::sqlite);

        store.close();
        store.openInBackground();

        assertThatThrownBy(store::size).hasMessage("the cache store is closed");
        assertThat(opened).hasValue(0);
        assertThat(home.resolve("cache.db")).doesNotExist();
    }

    @Test
    void anOpenerThatFailsFailsEachCallWithItsReason() {
        OpeningStore store = new OpeningStore(() -> {
            throw new IllegalStateException("cannot use the sqlite store: disk full");
        });

        assertThatThrownBy(store::size).isInstanceOf(IllegalStateException.class)
                .hasMessage("cannot use the sqlite store: disk full");
        assertThatThrownBy(() -> store.get("v1:a")).hasMessage("cannot use the sqlite store: disk full");
        store.close();
    }
}
