package dev.execache.store.sqlite;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.execache.core.MutableClock;
import dev.execache.core.spi.CacheEntry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The file is ours or it is refused, with its path in the message, and left as it was. */
class SqliteCacheFileTest {
    @TempDir
    Path directory;

    /** Where the CPU hogs leave their count, so that their loops are not optimised away. */
    private static volatile long spun;

    private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));

    @Test
    void aFileThatIsNotSqliteIsRefusedAndLeftUnchanged() throws Exception {
        Path notes = directory.resolve("notes.txt");
        Files.writeString(notes, "my notes, not a database\n".repeat(100));
        byte[] before = Files.readAllBytes(notes);

        assertThatThrownBy(() -> open(notes))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(notes.toString())
                .hasMessageContaining("not a SQLite database");

        assertThat(Files.readAllBytes(notes)).isEqualTo(before);
        assertThat(siblingsOf(notes)).containsExactly("notes.txt");
    }

    @Test
    void aDirectoryIsRefused() {
        assertThatThrownBy(() -> open(directory))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(directory.toString())
                .hasMessageContaining("directory");
    }

    @Test
    void aPathUnderARegularFileIsRefused() throws Exception {
        Path file = directory.resolve("plain");
        Files.writeString(file, "x");
        Path below = file.resolve("cache.db");

        assertThatThrownBy(() -> open(below))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(below.toString());
        assertThat(Files.readString(file)).isEqualTo("x");
    }

    @Test
    void aPlaceNoOneMayWriteIsRefused() {
        Path proc = Path.of("/proc/self");
        assumeTrue(Files.isDirectory(proc), "needs Linux /proc, where even root cannot create files");
        Path file = proc.resolve("execache/cache.db");

        assertThatThrownBy(() -> open(file))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(file.toString());
    }

    @Test
    void aReadOnlyFileIsRefusedAndLeftUnchanged() throws Exception {
        assumeFalse("root".equals(System.getProperty("user.name")), "root may write to any file");
        Path file = directory.resolve("cache.db");
        try (var store = open(file)) {
            store.put(entry("v1:a"));
        }
        byte[] before = Files.readAllBytes(file);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("r--r--r--"));

        assertThatThrownBy(() -> open(file))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(file.toString());
        assertThat(Files.readAllBytes(file)).isEqualTo(before);
    }

    @Test
    void missingParentDirectoriesAreCreated() {
        Path file = directory.resolve("a/b/c/cache.db");

        try (var store = open(file)) {
            store.put(entry("v1:a"));
        }

        assertThat(file).isRegularFile();
    }

    @Test
    void anEmptyFileBecomesACache() throws Exception {
        Path file = directory.resolve("cache.db");
        Files.createFile(file);

        try (var store = open(file)) {
            store.put(entry("v1:a"));
            assertThat(store.peek("v1:a")).isPresent();
        }
    }

    @Test
    void aNewCacheIsMarkedAsOursWithItsSchemaVersionAndUsesWriteAheadLogging() throws Exception {
        Path file = directory.resolve("cache.db");

        open(file).close();

        assertThat(SqliteFiles.queryLong(file, "PRAGMA application_id")).isEqualTo(Schema.APPLICATION_ID);
        assertThat(SqliteFiles.queryLong(file, "PRAGMA user_version")).isEqualTo(Schema.VERSION);
        assertThat(SqliteFiles.queryText(file, "PRAGMA journal_mode")).isEqualTo("wal");
    }

    @Test
    void aCacheFromANewerExecacheIsRefusedAndLeftUnchanged() throws Exception {
        Path file = directory.resolve("cache.db");
        SqliteFiles.execute(file,
                "CREATE TABLE cache_entries (cache_key TEXT PRIMARY KEY, future_column BLOB)",
                "INSERT INTO cache_entries VALUES ('v2:a', x'00')",
                "PRAGMA application_id = " + Schema.APPLICATION_ID,
                "PRAGMA user_version = " + (Schema.VERSION + 1));
        byte[] before = Files.readAllBytes(file);

        assertThatThrownBy(() -> open(file))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(file.toString())
                .hasMessageContaining("newer");

        assertThat(Files.readAllBytes(file)).isEqualTo(before);
        assertThat(SqliteFiles.queryText(file, "PRAGMA journal_mode")).isEqualTo("delete");
    }

    @Test
    void anotherApplicationsDatabaseIsRefusedAndLeftUnchanged() throws Exception {
        Path file = directory.resolve("app.db");
        SqliteFiles.execute(file,
                "CREATE TABLE invoices (id INTEGER PRIMARY KEY, total INTEGER)",
                "INSERT INTO invoices VALUES (1, 100)");
        byte[] before = Files.readAllBytes(file);

        assertThatThrownBy(() -> open(file))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(file.toString())
                .hasMessageContaining("another application");

        assertThat(Files.readAllBytes(file)).isEqualTo(before);
    }

    @Test
    void aDatabaseMarkedByAnotherApplicationIsRefused() throws Exception {
        Path file = directory.resolve("other.db");
        SqliteFiles.execute(file, "PRAGMA application_id = 42");

        assertThatThrownBy(() -> open(file))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(file.toString());
    }

    /** Everything after SQLite's header is garbage: the header still says the file is a cache. */
    @Test
    void aCacheDamagedAfterItsHeaderIsMovedAsideUnchangedAndReplaced() throws Exception {
        Path file = directory.resolve("cache.db");
        try (var store = open(file)) {
            store.put(entry("v1:a"));
        }
        byte[] damaged = Files.readAllBytes(file);
        for (int i = 100; i < damaged.length; i++) {
            damaged[i] = (byte) 0xA5;
        }
        Files.write(file, damaged);

        assertMovedAsideAndReplaced(file, damaged);
    }

    /**
     * The case met in the field: 4 KiB of garbage in one page in the middle of the file, which
     * SQLite only notices when a query walks through that page. It is noticed when the file is
     * opened, before anything is written into it.
     */
    @Test
    void aCacheWithAPageOfGarbageInTheMiddleIsNoticedWhenOpenedAndNothingIsWrittenIntoIt() throws Exception {
        Path file = directory.resolve("cache.db");

        assertMovedAsideAndReplaced(file, cacheWithAPageOfGarbageInTheMiddle(file, 60));
    }

    private byte[] cacheWithAPageOfGarbageInTheMiddle(Path file, int entries) throws Exception {
        try (var store = new SqliteCacheStore(file, entries, clock)) {
            for (int i = 0; i < entries; i++) {
                store.put(new CacheEntry("v1:" + i, "\"" + "v".repeat(3000) + i + "\"", "", Duration.ofMillis(5),
                        Map.of("github", "v1"), clock.instant(), clock.instant().plusSeconds(60), 0));
            }
        }
        byte[] damaged = Files.readAllBytes(file);
        int pageSize = 4096;
        int pages = damaged.length / pageSize;
        assertThat(pages).as("a file of many pages").isGreaterThan(20);
        Random garbage = new Random(25);
        byte[] page = new byte[pageSize];
        garbage.nextBytes(page);
        System.arraycopy(page, 0, damaged, (pages / 2) * pageSize, pageSize);
        Files.write(file, damaged);
        return damaged;
    }

    /**
     * The check at open counts its own steps, not the time that passes: with every core busy (and
     * the check slowed down by as much), a damaged page is still found before anything is written.
     */
    @Test
    void aCacheWithAPageOfGarbageOpenedWhileEveryCoreIsBusyIsMovedAsideAndNothingIsWrittenIntoIt() throws Exception {
        Path file = directory.resolve("cache.db");
        byte[] damaged = cacheWithAPageOfGarbageInTheMiddle(file, 60);
        AtomicBoolean busy = new AtomicBoolean(true);
        List<Thread> hogs = new ArrayList<>();
        for (int core = 0; core < Runtime.getRuntime().availableProcessors(); core++) {
            Thread hog = new Thread(() -> {
                long spin = 0;
                while (busy.get()) {
                    spin++;
                }
                spun += spin;
            }, "cpu-hog-" + core);
            hog.setDaemon(true);
            hog.start();
            hogs.add(hog);
        }
        try {
            assertMovedAsideAndReplaced(file, damaged);
        } finally {
            busy.set(false);
            for (Thread hog : hogs) {
                hog.join();
            }
        }
    }

    /**
     * A file the check at open cannot finish within its bound (here a bound of two steps stands for
     * a large file) is said to be unchecked, once, and is checked whole before its first write: a
     * damaged one is then moved aside as at open, with nothing written into it.
     */
    @Test
    void aCacheTooLargeToCheckWholeAtOpenIsSaidOnceAndCheckedWholeBeforeItsFirstWrite() throws Exception {
        Path file = directory.resolve("cache.db");
        byte[] damaged = cacheWithAPageOfGarbageInTheMiddle(file, 600);
        try (LogCapture log = new LogCapture(); var store = new SqliteCacheStore(file, 1000, clock, 2)) {
            List<LogRecord> lines = log.lines;
            assertThat(lines).singleElement().satisfies(line -> assertThat(line.getMessage())
                    .contains(file + " is too large to check whole when opened")
                    .contains("before anything is written into it"));
            assertThat(Files.readAllBytes(file)).as("opening wrote nothing").isEqualTo(damaged);

            store.put(entry("v1:b"));

            assertThat(store.get("v1:b")).isPresent();
            assertThat(store.size()).as("the entry went into a new, empty cache").isEqualTo(1);
            Path aside = file.resolveSibling(siblingsOf(file).stream()
                    .filter(name -> name.startsWith("cache.db.damaged-")).findFirst().orElseThrow());
            assertThat(Files.readAllBytes(aside)).as("moved aside as it was: nothing written into it")
                    .isEqualTo(damaged);
            assertThat(lines).hasSize(2).last().satisfies(line -> assertThat(line.getMessage())
                    .contains(file + " is damaged").contains("moved it to " + aside));
        }
    }

    @Test
    void aSoundCacheTooLargeToCheckWholeAtOpenIsCheckedBeforeItsFirstWriteAndKept() throws Exception {
        Path file = directory.resolve("cache.db");
        try (var store = open(file)) {
            store.put(entry("v1:a"));
        }
        try (LogCapture log = new LogCapture(); var store = new SqliteCacheStore(file, 100, clock, 2)) {
            store.put(entry("v1:b"));
            store.put(entry("v1:c"));

            assertThat(store.size()).isEqualTo(3);
            assertThat(log.lines).singleElement().satisfies(line -> assertThat(line.getMessage())
                    .contains("too large to check whole when opened"));
        }
        assertThat(siblingsOf(file)).allMatch(name -> !name.contains("damaged"));
    }

    @Test
    void anotherApplicationsDamagedDatabaseIsRefusedAndLeftUnchanged() throws Exception {
        Path file = directory.resolve("other.db");
        SqliteFiles.execute(file, "CREATE TABLE notes (body TEXT)",
                "INSERT INTO notes SELECT printf('%.3000c', 'n') FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL"
                        + " SELECT i + 1 FROM n WHERE i < 60) SELECT i FROM n)");
        byte[] damaged = Files.readAllBytes(file);
        for (int i = 100; i < damaged.length; i++) {
            damaged[i] = (byte) 0xA5;
        }
        Files.write(file, damaged);

        assertThatThrownBy(() -> open(file))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(file.toString());
        assertThat(Files.readAllBytes(file)).isEqualTo(damaged);
        assertThat(siblingsOf(file)).containsExactly("other.db");
    }

    private void assertMovedAsideAndReplaced(Path file, byte[] damaged) throws Exception {
        List<LogRecord> lines;
        try (LogCapture log = new LogCapture(); var store = open(file)) {
            lines = log.lines;
            assertThat(store.size()).as("a new, empty cache").isZero();
            store.put(entry("v1:b"));
            assertThat(store.get("v1:b")).isPresent();
        }

        List<String> siblings = siblingsOf(file);
        assertThat(siblings).hasSize(2).contains("cache.db");
        Path aside = file.resolveSibling(siblings.stream().filter(name -> !name.equals("cache.db")).findFirst().orElseThrow());
        assertThat(aside.getFileName().toString()).startsWith("cache.db.damaged-");
        assertThat(Files.readAllBytes(aside)).as("moved aside as it was: nothing written into it").isEqualTo(damaged);
        assertThat(lines).singleElement().satisfies(line -> assertThat(line.getMessage())
                .contains(file.toString() + " is damaged").contains("moved it to " + aside).doesNotContain("\n"));
    }

    /** The store's log lines while it is open. */
    private static final class LogCapture extends Handler implements AutoCloseable {
        private final Logger logger = Logger.getLogger(SqliteCacheStore.class.getName());
        final List<LogRecord> lines = new CopyOnWriteArrayList<>();

        LogCapture() {
            logger.addHandler(this);
        }

        @Override
        public void publish(LogRecord record) {
            lines.add(record);
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
            logger.removeHandler(this);
        }
    }

    @Test
    void aPathWithAQuestionMarkIsRefusedRatherThanMisread() {
        Path file = directory.resolve("cache.db?mode=memory");

        assertThatThrownBy(() -> open(file))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(file.toString());
        assertThat(file).doesNotExist();
    }

    @Test
    void theDefaultPathFollowsXdgCacheHome() {
        assertThat(SqliteCacheStore.defaultPath("/var/cache/me", "/home/me"))
                .isEqualTo(Path.of("/var/cache/me/execache/cache.db"));
        assertThat(SqliteCacheStore.defaultPath(null, "/home/me"))
                .isEqualTo(Path.of("/home/me/.cache/execache/cache.db"));
        assertThat(SqliteCacheStore.defaultPath("", "/home/me"))
                .isEqualTo(Path.of("/home/me/.cache/execache/cache.db"));
        assertThat(SqliteCacheStore.defaultPath("relative/cache", "/home/me"))
                .as("the XDG spec says to ignore a relative path")
                .isEqualTo(Path.of("/home/me/.cache/execache/cache.db"));
        assertThat(SqliteCacheStore.defaultPath().endsWith(Path.of("execache", "cache.db"))).isTrue();
    }

    @Test
    void aClosedStoreSaysSo() {
        SqliteCacheStore store = open(directory.resolve("cache.db"));
        store.close();
        store.close();

        assertThatThrownBy(() -> store.get("v1:a"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }

    private SqliteCacheStore open(Path file) {
        return new SqliteCacheStore(file, 100, clock);
    }

    private CacheEntry entry(String key) {
        Instant now = clock.instant();
        return new CacheEntry(key, "1", "", Duration.ofMillis(5), Map.of("github", "v1"), now, now.plusSeconds(60), 0);
    }

    private static List<String> siblingsOf(Path file) throws Exception {
        try (var files = Files.list(file.getParent())) {
            return files.map(path -> path.getFileName().toString()).sorted().toList();
        }
    }
}
