package dev.execache.store.sqlite;

import dev.execache.core.spi.CacheEntry;
import java.lang.System.Logger.Level;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.JdbiException;
import org.jdbi.v3.core.statement.PreparedBatch;
import org.sqlite.ProgressHandler;
import org.sqlite.SQLiteErrorCode;
import org.sqlite.SQLiteException;

/**
 * The tables of a cache file, and how a file made by an older execache is brought up to
 * date. The file says what it is in its header: {@code PRAGMA application_id} marks it as
 * execache's and {@code PRAGMA user_version} gives the schema version.
 *
 * <p>Version 0 is the seed's single table, {@code cache_entries(cache_key, result,
 * tool_versions, created_at, expires_at, hit_count)}, with no application id.
 */
final class Schema {
    static final int VERSION = 6;
    static final int APPLICATION_ID = 0x65786361;

    private static final System.Logger LOG = System.getLogger(Schema.class.getName());
    private static final int EMPTY = -1;
    private static final Set<String> SEED_COLUMNS =
            Set.of("cache_key", "result", "tool_versions", "created_at", "expires_at", "hit_count");

    /**
     * Version 1 (a new file is created at version 1, then migrated); times are epoch milliseconds. {@code last_access} orders entries by their last
     * use, larger is more recent; it is a store-wide sequence, not a time, since many uses share
     * a millisecond. The small columns come first so that reading them skips the overflow pages
     * of a large result.
     */
    private static final List<String> TABLES = List.of(
            """
            CREATE TABLE cache_entries (
                cache_key       TEXT    NOT NULL PRIMARY KEY,
                created_at      INTEGER NOT NULL,
                expires_at      INTEGER NOT NULL,
                last_access     INTEGER NOT NULL,
                hit_count       INTEGER NOT NULL DEFAULT 0,
                execution_nanos INTEGER NOT NULL,
                estimated_bytes INTEGER NOT NULL,
                tool_versions   TEXT    NOT NULL,
                result          TEXT    NOT NULL,
                console         TEXT    NOT NULL)""",
            "CREATE INDEX cache_entries_by_expiry ON cache_entries (expires_at)",
            "CREATE INDEX cache_entries_by_last_access ON cache_entries (last_access)",
            """
            CREATE TABLE entry_tools (
                tool      TEXT NOT NULL,
                cache_key TEXT NOT NULL REFERENCES cache_entries (cache_key) ON DELETE CASCADE,
                PRIMARY KEY (tool, cache_key)) WITHOUT ROWID""",
            "CREATE INDEX entry_tools_by_key ON entry_tools (cache_key)",
            "CREATE TABLE counters (name TEXT NOT NULL PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID",
            "CREATE TABLE last_seen_versions (tool TEXT NOT NULL PRIMARY KEY, version TEXT NOT NULL) WITHOUT ROWID");

    /** Rows whose tool versions are not a JSON object cannot be trusted and are left behind. */
    private static final List<String> FROM_SEED = concat(
            List.of("ALTER TABLE cache_entries RENAME TO seed_cache_entries"),
            TABLES,
            List.of(
                    """
                    INSERT INTO cache_entries (cache_key, created_at, expires_at, last_access, hit_count,
                                               execution_nanos, estimated_bytes, tool_versions, result, console)
                    SELECT cache_key, created_at, expires_at,
                           row_number() OVER (ORDER BY created_at, rowid),
                           coalesce(hit_count, 0), 0,
                           64 + 2 * (length(cache_key) + length(result))
                              + 2 * coalesce((SELECT sum(length(key) + length(value)) FROM json_each(tool_versions)), 0),
                           (SELECT json_group_object(key, coalesce(CAST(value AS TEXT), ''))
                              FROM json_each(tool_versions)),
                           result, ''
                      FROM seed_cache_entries
                     WHERE cache_key IS NOT NULL AND result IS NOT NULL
                       AND typeof(created_at) = 'integer' AND typeof(expires_at) = 'integer'
                       AND json_valid(tool_versions) AND json_type(tool_versions) = 'object'""",
                    """
                    INSERT OR IGNORE INTO entry_tools (tool, cache_key)
                    SELECT tool.key, entry.cache_key FROM cache_entries entry, json_each(entry.tool_versions) tool""",
                    "DROP TABLE seed_cache_entries"));

    /** Version 2: each entry carries a label a person recognises it by; older entries get none. */
    private static final List<String> TO_LABELS = List.of(
            "ALTER TABLE cache_entries ADD COLUMN label TEXT NOT NULL DEFAULT ''");

    /**
     * Version 3: an entry may belong to a bound group (a tool rule), whose bound the store keeps
     * (see {@code CacheStore#put(CacheEntry, GroupBound)}), and carries the checksum of its
     * value ({@code CacheEntry#checksum}); the checksums of entries already there are made by
     * {@link #fillChecksums} in the same transaction.
     */
    private static final List<String> GROUPS_AND_CHECKSUMS = List.of(
            "ALTER TABLE cache_entries ADD COLUMN bound_group TEXT",
            "ALTER TABLE cache_entries ADD COLUMN checksum INTEGER NOT NULL DEFAULT 0",
            "CREATE INDEX cache_entries_by_group ON cache_entries (bound_group, last_access) WHERE bound_group IS NOT NULL");

    /**
     * Version 4: the tool index keeps the version each entry was made with, so that a new version
     * removes only the entries of the old one ({@code CacheStore#removeByTool(String, String)});
     * last-seen versions are kept per scope (a project), and those recorded before go to the
     * default scope {@code ''}.
     */
    private static final List<String> SCOPED_VERSIONS = List.of(
            "ALTER TABLE entry_tools ADD COLUMN version TEXT NOT NULL DEFAULT ''",
            """
            UPDATE entry_tools SET version = coalesce(
                (SELECT CAST(made_with.value AS TEXT)
                   FROM cache_entries entry, json_each(entry.tool_versions) made_with
                  WHERE entry.cache_key = entry_tools.cache_key AND made_with.key = entry_tools.tool), '')""",
            """
            CREATE TABLE scoped_versions (
                scope   TEXT NOT NULL,
                tool    TEXT NOT NULL,
                version TEXT NOT NULL,
                PRIMARY KEY (scope, tool)) WITHOUT ROWID""",
            "INSERT INTO scoped_versions (scope, tool, version) SELECT '', tool, version FROM last_seen_versions",
            "DROP TABLE last_seen_versions",
            "ALTER TABLE scoped_versions RENAME TO last_seen_versions");

    /**
     * Version 5: each server's write generation ({@code CacheStore#writeGenerations()}), shared by
     * every process on the file.
     */
    private static final List<String> WRITE_GENERATIONS = List.of(
            "CREATE TABLE write_generations (server TEXT NOT NULL PRIMARY KEY, generation INTEGER NOT NULL) WITHOUT ROWID");

    /**
     * Version 6: the HTTP service's open sessions ({@code CacheStore#sessions()}), shared by every process on
     * the file; {@code expires_at} in epoch milliseconds.
     */
    private static final List<String> SESSIONS = List.of(
            "CREATE TABLE sessions (id TEXT NOT NULL PRIMARY KEY, owner TEXT NOT NULL, expires_at INTEGER NOT NULL)",
            "CREATE INDEX sessions_by_expiry ON sessions (expires_at)");

    /** {@code MIGRATIONS.get(v)} takes a file from version {@code v} to {@code v + 1}. */
    private static final List<List<String>> MIGRATIONS =
            List.of(FROM_SEED, TO_LABELS, GROUPS_AND_CHECKSUMS, SCOPED_VERSIONS, WRITE_GENERATIONS, SESSIONS);

    private Schema() {
    }

    /**
     * Runs {@code PRAGMA quick_check}, which finds what is wrong with the file's structure (its
     * b-trees, the links between its pages), for at most {@code maxSteps} of its own steps (a step
     * is about a page or a row visited), or to the end when {@code maxSteps} is
     * {@link #WHOLE}. Counted in the check's own steps, not in time: on a busy machine, or while the
     * JVM is still warming up, a time bound ran out before the check had done anything. Only
     * reads. (A damaged value is caught by its checksum; this is about the file itself.)
     */
    static StructureCheck checkStructure(Jdbi jdbi, long maxSteps) {
        return jdbi.withHandle(handle -> {
            Connection connection = handle.getConnection();
            try {
                if (maxSteps != WHOLE) {
                    int period = (int) Math.min(STEPS_PER_PROGRESS_CALL, Math.max(1, maxSteps));
                    long maxCalls = Math.max(1, maxSteps / period);
                    ProgressHandler.setHandler(connection, period, new ProgressHandler() {
                        private long calls;

                        @Override
                        protected int progress() {
                            return ++calls > maxCalls ? 1 : 0;
                        }
                    });
                }
                try {
                    List<String> problems = handle.createQuery("PRAGMA quick_check(3)").mapTo(String.class).list();
                    return problems.equals(List.of("ok")) ? StructureCheck.SOUND
                            : StructureCheck.damaged(String.join("; ", problems).replace("*** in database main ***", "")
                                    .replaceAll("\\s+", " ").strip());
                } catch (JdbiException e) {
                    if (hasCode(e, SQLiteErrorCode.SQLITE_INTERRUPT)) {
                        return StructureCheck.UNFINISHED;
                    }
                    if (hasCode(e, SQLiteErrorCode.SQLITE_CORRUPT) || hasCode(e, SQLiteErrorCode.SQLITE_NOTADB)) {
                        return StructureCheck.damaged(
                                String.valueOf(e.getCause() == null ? e.getMessage() : e.getCause().getMessage()));
                    }
                    throw e;
                } finally {
                    if (maxSteps != WHOLE) {
                        ProgressHandler.clearHandler(connection);
                    }
                }
            } catch (SQLException e) {
                throw new IllegalStateException("cannot check SQLite cache: " + e.getMessage(), e);
            }
        });
    }

    /** {@link #checkStructure}'s bound for a check that runs to the end. */
    static final long WHOLE = Long.MAX_VALUE;
    private static final int STEPS_PER_PROGRESS_CALL = 1000;

    /**
     * What {@link #checkStructure} found: nothing wrong, what is wrong, or neither because it
     * stopped at its bound before the end.
     */
    record StructureCheck(boolean finished, Optional<String> damage) {
        static final StructureCheck SOUND = new StructureCheck(true, Optional.empty());
        static final StructureCheck UNFINISHED = new StructureCheck(false, Optional.empty());

        static StructureCheck damaged(String what) {
            return new StructureCheck(true, Optional.of(what));
        }
    }

    private static boolean hasCode(Throwable e, SQLiteErrorCode code) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof SQLiteException sqlite && sqlite.getResultCode().code % 256 == code.code) {
                return true;
            }
        }
        return false;
    }

    /**
     * Makes the file a current cache: creates the tables in an empty file, migrates an older
     * one, and refuses, without writing to it, a file that is not an execache cache or is
     * from a newer execache.
     */
    static void open(Jdbi jdbi, Path file) {
        jdbi.useHandle(handle -> {
            refuseUnlessUsable(handle, file);
            enableWriteAheadLog(handle, file);
            handle.useTransaction(transaction -> upgrade(transaction, file));
        });
    }

    /**
     * Before WAL is switched on, which rewrites the file's header. The reads share one
     * transaction so that another process creating the schema meanwhile is seen whole or not at all.
     */
    private static void refuseUnlessUsable(Handle handle, Path file) {
        State state = handle.inTransaction(transaction -> inspect(transaction, file));
        startingVersion(state, file);
    }

    /** Inspects again inside the write transaction: another process may have got there first. */
    private static void upgrade(Handle handle, Path file) {
        int from = startingVersion(inspect(handle, file), file);
        if (from == VERSION) {
            return;
        }
        boolean created = from == EMPTY;
        if (created) {
            TABLES.forEach(handle::execute);
            from = 1;
        }
        for (int version = from; version < VERSION; version++) {
            MIGRATIONS.get(version).forEach(handle::execute);
        }
        if (from < 3) {
            fillChecksums(handle);
        }
        if (!created) {
            LOG.log(Level.INFO, "migrated SQLite cache {0} from schema version {1} to {2}", file, from, VERSION);
        }
        handle.execute("PRAGMA application_id = " + APPLICATION_ID);
        handle.execute("PRAGMA user_version = " + VERSION);
    }

    /** The checksum is CRC32C, which SQLite cannot compute: entries from before version 3 get theirs here. */
    private static void fillChecksums(Handle handle) {
        List<CacheEntry> entries = handle.createQuery("SELECT cache_key, result, console FROM cache_entries")
                .map((row, context) -> new CacheEntry(row.getString(1), row.getString(2), row.getString(3),
                        Duration.ZERO, Map.of(), Instant.EPOCH, Instant.EPOCH, 0))
                .list();
        if (!entries.isEmpty()) {
            PreparedBatch update = handle.prepareBatch("UPDATE cache_entries SET checksum = ? WHERE cache_key = ?");
            entries.forEach(entry -> update.add(entry.checksum(), entry.key()));
            update.execute();
        }
    }

    private static int startingVersion(State state, Path file) {
        if (state.applicationId() == APPLICATION_ID) {
            if (state.version() > VERSION) {
                throw new IllegalStateException("SQLite cache " + file + " has schema version " + state.version()
                        + ", newer than version " + VERSION + " that this execache knows; use a newer execache"
                        + " or another file (the file is left unchanged)");
            }
            return state.version();
        }
        if (state.applicationId() == 0 && state.version() == 0) {
            if (state.tables().isEmpty()) {
                return EMPTY;
            }
            if (state.entryColumns().containsAll(SEED_COLUMNS)) {
                return 0;
            }
        }
        throw new IllegalArgumentException("SQLite cache path " + file + " holds another application's database"
                + " (application_id " + state.applicationId() + ", user_version " + state.version()
                + ", tables " + state.tables() + "); refusing to use it as a cache (the file is left unchanged)");
    }

    private static State inspect(Handle handle, Path file) {
        try {
            return new State(
                    handle.createQuery("PRAGMA application_id").mapTo(Integer.class).one(),
                    handle.createQuery("PRAGMA user_version").mapTo(Integer.class).one(),
                    new TreeSet<>(handle.createQuery(
                            "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
                            .mapTo(String.class).list()),
                    Set.copyOf(handle.createQuery("SELECT name FROM pragma_table_info('cache_entries')")
                            .mapTo(String.class).list()));
        } catch (JdbiException e) {
            throw new IllegalArgumentException("cannot read SQLite cache " + file
                    + " (not a SQLite database, or damaged): " + e.getMessage(), e);
        }
    }

    /**
     * WAL is a property of the file: only the first opener switches it on. Several first
     * openers at once can get SQLITE_BUSY, which SQLite's busy timeout does not cover for a
     * journal-mode change, so that one is retried here for as long as the busy timeout.
     */
    private static void enableWriteAheadLog(Handle handle, Path file) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SingleConnection.BUSY_TIMEOUT_MILLIS);
        while (true) {
            try {
                String mode = handle.createQuery("PRAGMA journal_mode").mapTo(String.class).one();
                if (!"wal".equalsIgnoreCase(mode)) {
                    mode = handle.createQuery("PRAGMA journal_mode = WAL").mapTo(String.class).one();
                }
                if (!"wal".equalsIgnoreCase(mode)) {
                    LOG.log(Level.WARNING, "SQLite cache {0} could not use write-ahead logging (journal mode {1});"
                            + " processes sharing it will wait on one another longer", file, mode);
                }
                return;
            } catch (JdbiException e) {
                if (!isBusy(e) || System.nanoTime() > deadline) {
                    throw e;
                }
                try {
                    TimeUnit.MILLISECONDS.sleep(10);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    private static boolean isBusy(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof SQLiteException sqlite
                    && (sqlite.getResultCode() == SQLiteErrorCode.SQLITE_BUSY
                            || sqlite.getResultCode() == SQLiteErrorCode.SQLITE_LOCKED)) {
                return true;
            }
        }
        return false;
    }

    private static List<String> concat(List<String> first, List<String> second, List<String> third) {
        return Stream.of(first, second, third).flatMap(List::stream).toList();
    }

    private record State(int applicationId, int version, Set<String> tables, Set<String> entryColumns) {
    }
}
