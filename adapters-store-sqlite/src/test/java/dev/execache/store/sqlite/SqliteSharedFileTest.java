package dev.execache.store.sqlite;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.execache.core.MutableClock;
import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.CacheStore;
import dev.execache.core.spi.Counter;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Two stores on one file, as two processes would have them. */
class SqliteSharedFileTest {
    private static final Duration TTL = Duration.ofMinutes(5);
    /** Generous: a loaded machine may take long to schedule the write-behind thread. */
    private static final Duration WRITTEN_BEHIND = Duration.ofSeconds(30);

    @TempDir
    Path directory;

    private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private Path file;
    private SqliteCacheStore first;
    private SqliteCacheStore second;

    @BeforeEach
    void openBoth() {
        file = directory.resolve("cache.db");
        first = new SqliteCacheStore(file, 3, clock);
        second = new SqliteCacheStore(file, 3, clock);
    }

    @AfterEach
    void closeBoth() {
        first.close();
        second.close();
    }

    @Test
    void everythingSurvivesClosingAndReopening() {
        first.put(entry("v1:a", Map.of("github", "v1")));
        first.get("v1:a");
        first.counters().increment(Counter.HITS, 1);
        first.counters().increment(Counter.SAVED_NANOS, 120_000_000);
        first.recordVersions(CacheStore.DEFAULT_SCOPE, Map.of("github", "v1"));
        first.close();

        try (SqliteCacheStore reopened = new SqliteCacheStore(file, 3, clock)) {
            assertThat(reopened.peek("v1:a")).map(CacheEntry::hits).contains(1L);
            assertThat(reopened.counters().totals()).containsEntry(Counter.HITS, 1L).containsEntry(Counter.SAVED_NANOS, 120_000_000L);
            assertThat(reopened.lastSeenVersions(CacheStore.DEFAULT_SCOPE)).isEqualTo(Map.of("github", "v1"));
            assertThat(reopened.removeByTool("github")).isEqualTo(1);
        }
    }

    @Test
    void entriesPutByOneAreHitsForTheOther() {
        first.put(entry("v1:a", Map.of()));

        assertThat(second.get("v1:a")).map(CacheEntry::value).contains("\"v1:a\"");
    }

    @Test
    void hitsAndCountsAreWrittenWithTheNextWrite() {
        first.put(entry("v1:a", Map.of()));
        first.get("v1:a");
        first.get("v1:a");
        first.counters().increment(Counter.HITS, 2);

        assertThat(second.peek("v1:a")).map(CacheEntry::hits).as("a hit only reads").contains(0L);
        assertThat(second.counters().totals()).containsEntry(Counter.HITS, 0L);

        first.put(entry("v1:b", Map.of()));

        assertThat(second.peek("v1:a")).map(CacheEntry::hits).contains(2L);
        assertThat(second.counters().totals()).containsEntry(Counter.HITS, 2L);
    }

    /** Written in the background: the read that finds the write due does not wait for it. */
    @Test
    void hitsAreWrittenOnceTheOldestIsASecondOld() {
        first.put(entry("v1:a", Map.of()));
        first.get("v1:a");
        clock.advance(Duration.ofMillis(WriteBehind.MAX_PENDING_MILLIS - 1));
        first.get("v1:a");
        assertThat(second.peek("v1:a")).map(CacheEntry::hits).contains(0L);

        clock.advance(Duration.ofMillis(1));

        assertThat(first.get("v1:a")).map(CacheEntry::hits).contains(3L);
        await().atMost(WRITTEN_BEHIND).untilAsserted(() ->
                assertThat(second.peek("v1:a")).map(CacheEntry::hits).contains(3L));
        assertThat(first.get("v1:a")).map(CacheEntry::hits).contains(4L);
    }

    @Test
    void hitsAreWrittenOnceEnoughEntriesHaveBeenUsed() throws Exception {
        try (SqliteCacheStore large = new SqliteCacheStore(file, 1_000, clock)) {
            for (int i = 0; i < WriteBehind.MAX_PENDING_USES; i++) {
                large.put(entry("v1:" + i, Map.of()));
            }
            for (int i = 0; i < WriteBehind.MAX_PENDING_USES - 1; i++) {
                large.get("v1:" + i);
            }
            assertThat(second.peek("v1:0")).map(CacheEntry::hits).contains(0L);

            large.get("v1:0");
            assertThat(large.get("v1:" + (WriteBehind.MAX_PENDING_USES - 1))).map(CacheEntry::hits).contains(1L);

            await().atMost(WRITTEN_BEHIND).untilAsserted(() ->
                    assertThat(second.peek("v1:0")).map(CacheEntry::hits).contains(2L));
            assertThat(large.get("v1:0")).map(CacheEntry::hits).contains(3L);
        }
    }

    @Test
    void recencyWrittenByOneDecidesTheOthersEviction() {
        first.put(entry("v1:a", Map.of()));
        first.put(entry("v1:b", Map.of()));
        first.put(entry("v1:c", Map.of()));
        first.get("v1:a");
        first.close();

        second.put(entry("v1:d", Map.of()));

        assertThat(second.peek("v1:a")).as("used last by the other store").isPresent();
        assertThat(second.peek("v1:b")).isEmpty();
        assertThat(second.counters().totals()).containsEntry(Counter.EVICTIONS, 1L);
    }

    @Test
    void aReplacementByTheOtherDoesNotInheritHitsOfTheEntryItReplaced() {
        first.put(entry("v1:a", Map.of()));
        first.get("v1:a");
        clock.advance(Duration.ofMillis(5));
        second.put(entry("v1:a", Map.of()));

        first.close();

        assertThat(second.peek("v1:a")).map(CacheEntry::hits).contains(0L);
    }

    @Test
    void aPutPurgesExpiredEntriesRatherThanEvictLiveOnes() {
        first.put(entry("v1:old1", Map.of()));
        first.put(entry("v1:old2", Map.of()));
        clock.advance(TTL.minusSeconds(1));
        first.put(entry("v1:live", Map.of()));
        clock.advance(Duration.ofSeconds(1));

        first.put(entry("v1:new", Map.of()));

        assertThat(first.peek("v1:live")).isPresent();
        assertThat(first.peek("v1:new")).isPresent();
        assertThat(first.size()).isEqualTo(2);
        assertThat(first.counters().totals()).containsEntry(Counter.EXPIRATIONS, 2L).containsEntry(Counter.EVICTIONS, 0L);
    }

    @Test
    void aPutPurgesExpiredEntriesEvenBelowTheBound() throws Exception {
        first.put(entry("v1:a", Map.of("github", "v1")));
        clock.advance(TTL);

        second.put(entry("v1:b", Map.of()));

        assertThat(SqliteFiles.queryText(file, "SELECT group_concat(cache_key) FROM cache_entries")).isEqualTo("v1:b");
        assertThat(SqliteFiles.queryLong(file, "SELECT count(*) FROM entry_tools")).isZero();
        assertThat(first.counters().totals()).containsEntry(Counter.EXPIRATIONS, 1L);
    }

    @Test
    void anExpiredEntryIsRemovedFromTheFileOnAccess() throws Exception {
        first.put(entry("v1:a", Map.of("github", "v1")));
        clock.advance(TTL);

        assertThat(second.get("v1:a")).isEmpty();
        assertThat(second.counters().totals()).as("counted at once").containsEntry(Counter.EXPIRATIONS, 1L);

        await().atMost(WRITTEN_BEHIND).untilAsserted(() ->
                assertThat(SqliteFiles.queryLong(file, "SELECT count(*) FROM cache_entries")).isZero());
        assertThat(SqliteFiles.queryLong(file, "SELECT count(*) FROM entry_tools")).isZero();
        assertThat(first.counters().totals()).containsEntry(Counter.EXPIRATIONS, 1L);
    }

    @Test
    void anExpiredEntryMetByBothIsCountedOnce() {
        first.put(entry("v1:a", Map.of()));
        clock.advance(TTL);

        assertThat(first.get("v1:a")).isEmpty();
        assertThat(second.get("v1:a")).isEmpty();
        first.purgeExpired();
        second.purgeExpired();

        assertThat(first.counters().totals()).containsEntry(Counter.EXPIRATIONS, 1L);
        assertThat(second.counters().totals()).containsEntry(Counter.EXPIRATIONS, 1L);
    }

    /**
     * Another process holds the file's write lock and a put of this store waits for it (holding
     * this store's writer), and the write-behind is due: reads go on all the same, on their own
     * connection, and the put ends once the lock is let go.
     */
    @Test
    void aReadWaitsNeitherForAWriteUnderWayNorForTheWriteBehind() throws Exception {
        first.put(entry("v1:a", Map.of()));
        ExecutorService putter = Executors.newSingleThreadExecutor();
        try (Connection other = DriverManager.getConnection("jdbc:sqlite:" + file);
                Statement holding = other.createStatement()) {
            holding.execute("BEGIN IMMEDIATE");
            Future<?> put = putter.submit(() -> first.put(entry("v1:b", Map.of())));
            // the put holds the writer before the first use is noted, so it takes none of the uses
            // and the write-behind, due from the second, is queued behind it (a put that took the
            // first use leaves the others not due: see the next test)
            await().atMost(WRITTEN_BEHIND).until(first::writeUnderWay);

            assertThat(first.get("v1:a")).map(CacheEntry::hits).contains(1L);
            clock.advance(Duration.ofMillis(WriteBehind.MAX_PENDING_MILLIS));
            for (int i = 2; i <= 10; i++) {
                assertThat(first.get("v1:a")).map(CacheEntry::hits).as("the write-behind is due").contains((long) i);
            }

            assertThat(put).as("the put still waits for the other process's write").isNotDone();
            holding.execute("ROLLBACK");
            put.get(1, TimeUnit.MINUTES);
        } finally {
            putter.shutdownNow();
        }
        await().atMost(WRITTEN_BEHIND).untilAsserted(() ->
                assertThat(second.peek("v1:a")).map(CacheEntry::hits).contains(10L));
        assertThat(first.peek("v1:b")).isPresent();
    }

    /**
     * A write took the uses noted so far and waits for another process's lock; the uses noted
     * meanwhile are younger than the bound, and no read comes after them: they are written all
     * the same once they are due, in the background.
     */
    @Test
    void usesNotedDuringAWriteAreWrittenOnceDueWithNoReadAfterThem() throws Exception {
        first.put(entry("v1:a", Map.of()));
        ExecutorService putter = Executors.newSingleThreadExecutor();
        try (Connection other = DriverManager.getConnection("jdbc:sqlite:" + file);
                Statement holding = other.createStatement()) {
            holding.execute("BEGIN IMMEDIATE");
            assertThat(first.get("v1:a")).map(CacheEntry::hits).contains(1L);
            Future<?> put = putter.submit(() -> first.put(entry("v1:b", Map.of())));
            await().atMost(WRITTEN_BEHIND).until(first::writeUnderWay);
            clock.advance(Duration.ofMillis(WriteBehind.MAX_PENDING_MILLIS));
            for (int i = 2; i <= 10; i++) {
                assertThat(first.get("v1:a")).map(CacheEntry::hits).contains((long) i);
            }
            holding.execute("ROLLBACK");
            put.get(1, TimeUnit.MINUTES);
        } finally {
            putter.shutdownNow();
        }
        assertThat(second.peek("v1:a")).map(CacheEntry::hits).as("the put wrote the use it took").contains(1L);

        clock.advance(Duration.ofMillis(WriteBehind.MAX_PENDING_MILLIS));

        await().atMost(WRITTEN_BEHIND).untilAsserted(() ->
                assertThat(second.peek("v1:a")).map(CacheEntry::hits).contains(10L));
    }

    @Test
    void removedEntriesTakeTheirToolRowsWithThem() throws Exception {
        first.put(entry("v1:a", Map.of("github", "v1", "sql", "3")));
        first.put(entry("v1:b", Map.of("github", "v1")));
        first.put(entry("v1:c", Map.of("sql", "3")));
        first.put(entry("v1:d", Map.of("sql", "3")));
        first.remove("v1:c");
        first.removeByTool("github");

        assertThat(SqliteFiles.queryLong(file, "SELECT count(*) FROM entry_tools")).isEqualTo(1);
        first.clear();
        assertThat(SqliteFiles.queryLong(file, "SELECT count(*) FROM entry_tools")).isZero();
    }

    private CacheEntry entry(String key, Map<String, String> tools) {
        Instant now = clock.instant();
        return new CacheEntry(key, "\"" + key + "\"", "", Duration.ofMillis(120), tools, now, now.plus(TTL), 0);
    }
}
