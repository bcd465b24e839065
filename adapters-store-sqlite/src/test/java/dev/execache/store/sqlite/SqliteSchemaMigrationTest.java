package dev.execache.store.sqlite;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.core.MutableClock;
import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.CacheStore;
import dev.execache.core.spi.Counter;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SqliteSchemaMigrationTest {
    private static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");

    @TempDir
    Path directory;

    private final MutableClock clock = new MutableClock(NOW);

    /** The seed's table, as the seed left it: no application id, user_version 0. */
    private Path seedFile() throws Exception {
        Path file = directory.resolve("seed.db");
        long created = NOW.toEpochMilli();
        long expires = NOW.plusSeconds(300).toEpochMilli();
        SqliteFiles.execute(file,
                """
                CREATE TABLE cache_entries (
                    cache_key TEXT PRIMARY KEY,
                    result TEXT NOT NULL,
                    tool_versions TEXT NOT NULL,
                    created_at INTEGER NOT NULL,
                    expires_at INTEGER NOT NULL,
                    hit_count INTEGER NOT NULL DEFAULT 0)""",
                "CREATE INDEX idx_expires ON cache_entries (expires_at)",
                "INSERT INTO cache_entries VALUES ('v1:gh', '{\"n\":1}', '{\"github\":\"v1\",\"sql\":\"3\"}', %d, %d, 4)"
                        .formatted(created, expires),
                "INSERT INTO cache_entries VALUES ('v1:none', '[]', '{}', %d, %d, 0)".formatted(created + 1, expires),
                "INSERT INTO cache_entries VALUES ('v1:odd', '\"x\"', '{\"t\\u00f8\\\"l\":2}', %d, %d, 1)"
                        .formatted(created + 2, expires),
                "INSERT INTO cache_entries VALUES ('v1:broken', '1', 'not json', %d, %d, 0)".formatted(created, expires));
        return file;
    }

    @Test
    void aSeedFileIsMigratedAndItsEntriesStayUsable() throws Exception {
        Path file = seedFile();

        try (SqliteCacheStore store = new SqliteCacheStore(file, 100, clock)) {
            CacheEntry gh = store.peek("v1:gh").orElseThrow();
            assertThat(gh.value()).isEqualTo("{\"n\":1}");
            assertThat(gh.console()).isEmpty();
            assertThat(gh.toolVersions()).isEqualTo(Map.of("github", "v1", "sql", "3"));
            assertThat(gh.createdAt()).isEqualTo(NOW);
            assertThat(gh.expiresAt()).isEqualTo(NOW.plusSeconds(300));
            assertThat(gh.hits()).isEqualTo(4);
            assertThat(store.get("v1:gh")).map(CacheEntry::hits).contains(5L);
            assertThat(store.peek("v1:odd")).map(CacheEntry::toolVersions).contains(Map.of("tø\"l", "2"));
            assertThat(store.peek("v1:broken")).as("tool versions that are not JSON cannot be trusted").isEmpty();
            assertThat(store.size()).isEqualTo(3);
            assertThat(store.estimatedBytes()).isPositive();

            assertThat(store.removeByTool("sql")).as("the tool index is filled from the old column").isEqualTo(1);
            assertThat(store.removeByTool("tø\"l")).isEqualTo(1);
            assertThat(store.peek("v1:none")).isPresent();
        }
        assertThat(SqliteFiles.queryLong(file, "PRAGMA user_version")).isEqualTo(Schema.VERSION);
        assertThat(SqliteFiles.queryLong(file, "PRAGMA application_id")).isEqualTo(Schema.APPLICATION_ID);
        assertThat(SqliteFiles.queryText(file, "PRAGMA journal_mode")).isEqualTo("wal");
        assertThat(SqliteFiles.queryLong(file,
                "SELECT count(*) FROM sqlite_schema WHERE name IN ('seed_cache_entries', 'idx_expires')")).isZero();
    }

    /** A file as schema version 1 left it: entries without labels. */
    @Test
    void aVersionOneFileGainsLabelsAndKeepsItsEntries() throws Exception {
        Path file = directory.resolve("v1.db");
        long created = NOW.toEpochMilli();
        long expires = NOW.plusSeconds(300).toEpochMilli();
        SqliteFiles.execute(file,
                """
                CREATE TABLE cache_entries (
                    cache_key TEXT NOT NULL PRIMARY KEY, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
                    last_access INTEGER NOT NULL, hit_count INTEGER NOT NULL DEFAULT 0,
                    execution_nanos INTEGER NOT NULL, estimated_bytes INTEGER NOT NULL,
                    tool_versions TEXT NOT NULL, result TEXT NOT NULL, console TEXT NOT NULL)""",
                "CREATE INDEX cache_entries_by_expiry ON cache_entries (expires_at)",
                "CREATE INDEX cache_entries_by_last_access ON cache_entries (last_access)",
                """
                CREATE TABLE entry_tools (tool TEXT NOT NULL,
                    cache_key TEXT NOT NULL REFERENCES cache_entries (cache_key) ON DELETE CASCADE,
                    PRIMARY KEY (tool, cache_key)) WITHOUT ROWID""",
                "CREATE INDEX entry_tools_by_key ON entry_tools (cache_key)",
                "CREATE TABLE counters (name TEXT NOT NULL PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID",
                "CREATE TABLE last_seen_versions (tool TEXT NOT NULL PRIMARY KEY, version TEXT NOT NULL) WITHOUT ROWID",
                "INSERT INTO cache_entries VALUES ('v1:old', %d, %d, 1, 2, 5000, 100, '{\"gh\":\"v1\"}', '7', 'hi')"
                        .formatted(created, expires),
                "INSERT INTO entry_tools VALUES ('gh', 'v1:old')",
                "PRAGMA application_id = " + Schema.APPLICATION_ID,
                "PRAGMA user_version = 1");

        try (SqliteCacheStore store = new SqliteCacheStore(file, 100, clock)) {
            CacheEntry old = store.peek("v1:old").orElseThrow();
            assertThat(old.label()).isEmpty();
            assertThat(old.value()).isEqualTo("7");
            assertThat(old.hits()).isEqualTo(2);
            assertThat(old.toolVersions()).isEqualTo(Map.of("gh", "v1"));
            store.put(new CacheEntry("v1:new", "1", "", Duration.ZERO, Map.of(), NOW, NOW.plusSeconds(60), 0, "new.ts"));
            assertThat(store.peek("v1:new")).map(CacheEntry::label).contains("new.ts");
        }
        assertThat(SqliteFiles.queryLong(file, "PRAGMA user_version")).isEqualTo(Schema.VERSION);
    }

    /** A file as schema version 3 left it: one map of last-seen versions, a tool index without versions. */
    @Test
    void aVersionThreeFileGetsScopedVersionsAndKeepsItsEntriesAndCounters() throws Exception {
        Path file = directory.resolve("v3.db");
        long created = NOW.toEpochMilli();
        long expires = NOW.plusSeconds(300).toEpochMilli();
        CacheEntry made = new CacheEntry("v1:gh", "7", "hi", Duration.ZERO, Map.of("gh", "v1", "sql", "3"), NOW,
                NOW.plusSeconds(300), 2, "gh.ts");
        SqliteFiles.execute(file,
                """
                CREATE TABLE cache_entries (
                    cache_key TEXT NOT NULL PRIMARY KEY, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
                    last_access INTEGER NOT NULL, hit_count INTEGER NOT NULL DEFAULT 0,
                    execution_nanos INTEGER NOT NULL, estimated_bytes INTEGER NOT NULL,
                    tool_versions TEXT NOT NULL, result TEXT NOT NULL, console TEXT NOT NULL,
                    label TEXT NOT NULL DEFAULT '', bound_group TEXT, checksum INTEGER NOT NULL DEFAULT 0)""",
                "CREATE INDEX cache_entries_by_expiry ON cache_entries (expires_at)",
                "CREATE INDEX cache_entries_by_last_access ON cache_entries (last_access)",
                "CREATE INDEX cache_entries_by_group ON cache_entries (bound_group, last_access) WHERE bound_group IS NOT NULL",
                """
                CREATE TABLE entry_tools (tool TEXT NOT NULL,
                    cache_key TEXT NOT NULL REFERENCES cache_entries (cache_key) ON DELETE CASCADE,
                    PRIMARY KEY (tool, cache_key)) WITHOUT ROWID""",
                "CREATE INDEX entry_tools_by_key ON entry_tools (cache_key)",
                "CREATE TABLE counters (name TEXT NOT NULL PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID",
                "CREATE TABLE last_seen_versions (tool TEXT NOT NULL PRIMARY KEY, version TEXT NOT NULL) WITHOUT ROWID",
                ("INSERT INTO cache_entries VALUES ('v1:gh', %d, %d, 1, 2, 5000, 100, '{\"gh\":\"v1\",\"sql\":\"3\"}',"
                        + " '7', 'hi', 'gh.ts', NULL, %d)").formatted(created, expires, made.checksum()),
                ("INSERT INTO cache_entries VALUES ('v1:gh2', %d, %d, 2, 0, 5000, 100, '{\"gh\":\"v2\"}',"
                        + " '8', '', '', NULL, 0)").formatted(created, expires),
                "INSERT INTO entry_tools VALUES ('gh', 'v1:gh'), ('sql', 'v1:gh'), ('gh', 'v1:gh2')",
                "INSERT INTO counters VALUES ('HITS', 12)",
                "INSERT INTO last_seen_versions VALUES ('gh', 'v1'), ('sql', '3')",
                "PRAGMA application_id = " + Schema.APPLICATION_ID,
                "PRAGMA user_version = 3");

        try (SqliteCacheStore store = new SqliteCacheStore(file, 100, clock)) {
            CacheEntry gh = store.peek("v1:gh").orElseThrow();
            assertThat(gh.value()).isEqualTo("7");
            assertThat(gh.label()).isEqualTo("gh.ts");
            assertThat(gh.isIntact()).isTrue();
            assertThat(store.counters().totals().get(Counter.HITS)).isEqualTo(12L);
            assertThat(store.lastSeenVersions(CacheStore.DEFAULT_SCOPE))
                    .as("versions seen before scopes existed are the default scope's")
                    .isEqualTo(Map.of("gh", "v1", "sql", "3"));
            assertThat(store.lastSeenVersions("/some/project/execache.yaml")).isEmpty();

            assertThat(store.removeByTool("gh", "v2")).as("the tool index learned each entry's version").isEqualTo(1);
            assertThat(store.peek("v1:gh")).isPresent();
            assertThat(store.removeByTool("sql", "3")).isEqualTo(1);
            assertThat(store.size()).isZero();
        }
        assertThat(SqliteFiles.queryLong(file, "PRAGMA user_version")).isEqualTo(Schema.VERSION);
    }

    @Test
    void aSeedFileKeepsTheOrderOfItsEntriesForEviction() throws Exception {
        Path file = seedFile();

        try (SqliteCacheStore store = new SqliteCacheStore(file, 3, clock)) {
            store.put(new CacheEntry("v1:new", "1", "", Duration.ZERO, Map.of(), NOW, NOW.plusSeconds(60), 0));

            assertThat(store.peek("v1:gh")).as("the oldest entry goes first").isEmpty();
            assertThat(store.peek("v1:none")).isPresent();
            assertThat(store.peek("v1:odd")).isPresent();
            assertThat(store.peek("v1:new")).isPresent();
        }
    }

    @Test
    void aMigratedFileIsNotMigratedTwice() throws Exception {
        Path file = seedFile();
        new SqliteCacheStore(file, 100, clock).close();

        try (SqliteCacheStore store = new SqliteCacheStore(file, 100, clock)) {
            assertThat(store.size()).isEqualTo(3);
        }
    }
}
