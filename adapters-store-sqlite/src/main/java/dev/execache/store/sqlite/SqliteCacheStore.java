package dev.execache.store.sqlite;

import dev.execache.core.Glob;
import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.CacheStore;
import dev.execache.core.spi.Counter;
import dev.execache.core.spi.GroupBound;
import dev.execache.core.spi.StoreCounters;
import dev.execache.core.spi.WriteGenerations;
import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import dev.execache.store.sqlite.Schema.StructureCheck;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.HandleCallback;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.statement.PreparedBatch;
import org.jdbi.v3.core.statement.SqlStatements;
import org.jdbi.v3.core.statement.StatementContext;
import org.jdbi.v3.core.statement.TemplateEngine;
import org.jdbi.v3.sqlite3.SQLitePlugin;
import org.sqlite.SQLiteErrorCode;
import org.sqlite.SQLiteException;

/**
 * A {@link CacheStore} in one SQLite file that several processes may share: write-ahead
 * logging, a busy timeout and short {@code IMMEDIATE} transactions. A file that is not an
 * execache cache, or is from a newer execache, is refused and left as it was; one from an
 * older execache is migrated.
 *
 * <p>A hit only reads. The hit count and recency it earns, and counter increments, are kept
 * in memory and written with this store's next write, once {@value #MAX_PENDING_USES} entries
 * have been used, once the oldest is {@value #MAX_PENDING_MILLIS} ms old, or at {@link #close};
 * until then other processes see the previous counts and recency.
 */
public final class SqliteCacheStore implements CacheStore {
    private final StoreCounters figures = new Counters();
    private final WriteGenerations writes = new Writes();
    static final int MAX_PENDING_USES = 64;
    static final long MAX_PENDING_MILLIS = 1_000;

    private static final String SELECT_ENTRY = """
            SELECT cache_key, created_at, expires_at, hit_count, execution_nanos, tool_versions, result, console, label,
                   checksum
              FROM cache_entries WHERE cache_key = ?""";
    private static final String SELECT_LAST_SEEN = "SELECT tool, version FROM last_seen_versions WHERE scope = ?";
    private static final String SELECT_LIVE_ENTRIES = """
            SELECT cache_key, created_at, expires_at, hit_count, execution_nanos, tool_versions, result, console, label,
                   checksum
              FROM cache_entries WHERE expires_at > ?""";
    private static final String INSERT_ENTRY = """
            INSERT INTO cache_entries (cache_key, created_at, expires_at, last_access, hit_count,
                                       execution_nanos, estimated_bytes, tool_versions, result, console, label,
                                       bound_group, checksum)
            VALUES (?, ?, ?, (SELECT coalesce(max(last_access), 0) + 1 FROM cache_entries), ?, ?, ?, ?, ?, ?, ?, ?, ?)""";
    /** Counter rows of one tool are named {@code tool:<COUNTER>:<tool>}; totals by the counter's name alone. */
    private static final String TOOL_COUNTER_PREFIX = "tool:";
    /** Counter rows of one agent are named {@code agent:<COUNTER>:<agent>}. */
    private static final String AGENT_COUNTER_PREFIX = "agent:";
    private static final String RECORD_USE = """
            UPDATE cache_entries SET hit_count = hit_count + ?, last_access = ?
             WHERE cache_key = ? AND created_at = ?""";
    private static final String ADD_TO_COUNTER = """
            INSERT INTO counters (name, value) VALUES (?, ?)
            ON CONFLICT (name) DO UPDATE SET value = value + excluded.value""";
    /**
     * The row {@code since} holds when counting started (epoch ms): written with the first counts
     * of an empty table and at a zeroing of the counters. A file whose counts predate it has none.
     */
    private static final String SINCE = "since";
    private static final String START_COUNTING =
            "INSERT INTO counters (name, value) SELECT 'since', ? WHERE NOT EXISTS (SELECT 1 FROM counters)";
    private static final String ADVANCE_GENERATION = """
            INSERT INTO write_generations (server, generation) VALUES (?, 1)
            ON CONFLICT (server) DO UPDATE SET generation = generation + 1""";
    private static final String RECORD_VERSION = """
            INSERT INTO last_seen_versions (scope, tool, version) VALUES (?, ?, ?)
            ON CONFLICT (scope, tool) DO UPDATE SET version = excluded.version""";

    /**
     * How many of its own steps the check of the file's structure may take at open (see
     * {@link Schema#checkStructure}): about 0.5 s of work on one core of a quiet machine, a cache
     * file of about CALIBRATE MB. A larger file is checked whole before the first write into it.
     */
    static final long OPEN_CHECK_STEPS = 1_000_000;

    private static final System.Logger LOG = System.getLogger(SqliteCacheStore.class.getName());

    private final Path file;
    private final int maxEntries;
    private final Clock clock;
    private final long openCheckSteps;
    /**
     * Set when the check of the file's structure at open stopped at its bound: the file may be
     * damaged, so the check runs to its end before anything is written into it.
     */
    private boolean unchecked;
    /** Replaced, with {@link #jdbi}, only when the file is (see {@link #replaceFile}). */
    private SingleConnection connection;
    private Jdbi jdbi;
    /**
     * The selects every run makes (the hit's, the last-seen versions'), prepared on {@link #connection}
     * at their first use and kept, by their SQL, until it is replaced or one fails. Through a Jdbi
     * query a hit prepared its select again, and made a handle, a statement context and a copy of
     * the configuration, on every call: about a third of a hit.
     */
    private final Map<String, PreparedStatement> keptSelects = new HashMap<>();
    /** In order of use, the oldest first. */
    private final LinkedHashMap<String, PendingUse> pendingUses = new LinkedHashMap<>();
    /** {@link #toolVersions} parsed, by the column's text: the most recently used {@value #PARSED_TOOL_VERSIONS}. */
    private final Map<String, Map<String, String>> parsedToolVersions = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Map<String, String>> eldest) {
            return size() > PARSED_TOOL_VERSIONS;
        }
    };
    private static final int PARSED_TOOL_VERSIONS = 64;
    /** By counter row name. */
    private final Map<String, Long> pendingCounts = new LinkedHashMap<>();
    /** The agents counted in the file or pending, as last read from the file; null: read it again. */
    private Set<String> countedAgents;
    private long firstPendingAt;
    private boolean closed;

    /**
     * Opens, or creates with its parent directories, the cache at {@code file}.
     *
     * @throws IllegalArgumentException if {@code file} is a directory, not a SQLite database,
     *     or another application's database
     * @throws IllegalStateException if the file cannot be created or written, or is from a
     *     newer execache
     */
    public SqliteCacheStore(Path file, int maxEntries, Clock clock) {
        this(file, maxEntries, clock, OPEN_CHECK_STEPS);
    }

    SqliteCacheStore(Path file, int maxEntries, Clock clock, long openCheckSteps) {
        Objects.requireNonNull(file, "file must not be null");
        if (maxEntries < 1) {
            throw new IllegalArgumentException("maxEntries must be at least 1: " + maxEntries);
        }
        this.clock = Objects.requireNonNull(clock, "clock must not be null");
        this.maxEntries = maxEntries;
        this.openCheckSteps = openCheckSteps;
        this.file = CacheFile.prepare(file);
        attach(openIntact());
    }

    /**
     * Opens the file, unless its structure is damaged: a damaged cache is moved aside (said in
     * one line, with where) and a new file takes its place, so nothing is written into it. A
     * damaged file that is not marked as a cache is refused and left as it is.
     */
    private SingleConnection openIntact() {
        SingleConnection opened;
        try {
            opened = SingleConnection.open(file);
        } catch (IllegalArgumentException damagedOrNotADatabase) {
            if (!CacheFile.isMarkedAsCache(file)) {
                throw damagedOrNotADatabase;
            }
            return replaceDamaged(rootMessage(damagedOrNotADatabase));
        }
        StructureCheck check;
        try {
            check = Schema.checkStructure(jdbiOn(opened), openCheckSteps);
            if (!check.finished() && !CacheFile.opensWithoutWriting(file)) {
                check = Schema.checkStructure(jdbiOn(opened), Schema.WHOLE);
            }
        } catch (RuntimeException e) {
            opened.close();
            throw e;
        }
        Optional<String> damage = check.damage();
        if (damage.isEmpty()) {
            if (!check.finished()) {
                unchecked = true;
                LOG.log(System.Logger.Level.WARNING, "SQLite cache " + file + " is too large to check whole when"
                        + " opened; its check runs to the end before anything is written into it");
            }
            return opened;
        }
        opened.close();
        if (!CacheFile.isMarkedAsCache(file)) {
            throw new IllegalArgumentException("SQLite database " + file + " is damaged (" + damage.get()
                    + ") and is not an execache cache; refusing to use it (the file is left unchanged)");
        }
        return replaceDamaged(damage.get());
    }

    private SingleConnection replaceDamaged(String damage) {
        Path aside = CacheFile.moveAside(file, clock.instant());
        LOG.log(System.Logger.Level.WARNING, "SQLite cache " + file + " is damaged (" + damage + "); moved it to "
                + aside + " and started a new cache file in its place");
        return SingleConnection.open(file);
    }

    /**
     * Checks the rest of a file whose check at open stopped at its bound; a damaged one is moved
     * aside as at open, and what was pending for it (uses, counts) goes with it.
     */
    private void finishCheck() {
        Optional<String> damage = Schema.checkStructure(jdbi, Schema.WHOLE).damage();
        unchecked = false;
        if (damage.isEmpty()) {
            return;
        }
        pendingUses.clear();
        pendingCounts.clear();
        countedAgents = null;
        forgetKeptSelects();
        connection.close();
        attach(replaceDamaged(damage.get()));
    }

    /** Uses {@code opened} from now on, making it a current cache first. */
    private void attach(SingleConnection opened) {
        Jdbi made = jdbiOn(opened);
        try {
            Schema.open(made, file);
        } catch (RuntimeException e) {
            opened.close();
            throw e;
        }
        this.connection = opened;
        this.jdbi = made;
        this.keptSelects.clear();
    }

    private static Jdbi jdbiOn(SingleConnection connection) {
        Jdbi jdbi = Jdbi.create(connection).installPlugin(new SQLitePlugin());
        jdbi.getConfig(SqlStatements.class).setTemplateEngine(TemplateEngine.NOP);
        return jdbi;
    }

    /**
     * Removes the file and starts a new, empty one in its place, when removing every entry
     * cannot commit because the disk is full: it is only a cache, and a full disk must be
     * freeable through execache. Its counters and last-seen tool versions go with it; said in one line.
     */
    private void replaceFile(RuntimeException cannotCommit) {
        unchecked = false;
        pendingUses.clear();
        pendingCounts.clear();
        countedAgents = null;
        forgetKeptSelects();
        try {
            connection.close();
        } catch (RuntimeException e) {
            // the file goes anyway
        }
        CacheFile.remove(file);
        String said = "SQLite cache " + file + " could not commit removing its entries (" + rootMessage(cannotCommit)
                + "); removed the file";
        try {
            attach(SingleConnection.open(file));
        } catch (RuntimeException e) {
            closed = true;
            CacheFile.remove(file);
            LOG.log(System.Logger.Level.WARNING, said + "; a new one does not fit yet (" + rootMessage(e)
                    + "): the next command that opens the cache makes one");
            return;
        }
        LOG.log(System.Logger.Level.WARNING, said + " and started a new, empty one (its counters and last-seen tool"
                + " versions went with it)");
    }

    private static boolean isDiskFull(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof SQLiteException sqlite && sqlite.getResultCode().code % 256 == SQLiteErrorCode.SQLITE_FULL.code
                    || cause instanceof SQLException sql && sql.getErrorCode() % 256 == SQLiteErrorCode.SQLITE_FULL.code
                    || String.valueOf(cause.getMessage()).contains("[SQLITE_FULL]")) {
                return true;
            }
        }
        return false;
    }

    private static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getMessage() == null ? String.valueOf(e.getMessage()) : root.getMessage();
    }

    /** {@code $XDG_CACHE_HOME/execache/cache.db}, or {@code ~/.cache/execache/cache.db}. */
    public static Path defaultPath() {
        return defaultPath(System.getenv("XDG_CACHE_HOME"), System.getProperty("user.home"));
    }

    static Path defaultPath(String xdgCacheHome, String userHome) {
        boolean usable = xdgCacheHome != null && !xdgCacheHome.isEmpty() && Path.of(xdgCacheHome).isAbsolute();
        Path cacheHome = usable ? Path.of(xdgCacheHome) : Path.of(userHome, ".cache");
        return cacheHome.resolve("execache").resolve("cache.db");
    }

    /** The absolute path of the file. */
    public Path file() {
        return file;
    }

    @Override
    public synchronized Optional<CacheEntry> get(String key) {
        long now = clock.millis();
        Optional<CacheEntry> hit = live(key, now).map(entry -> recordUse(entry, now));
        writeIfDue(now);
        return hit;
    }

    @Override
    public synchronized Optional<CacheEntry> peek(String key) {
        return live(key, clock.millis()).map(this::withPendingHits);
    }

    @Override
    public synchronized List<CacheEntry> entries() {
        long now = clock.millis();
        return jdbi.withHandle(handle -> handle.createQuery(SELECT_LIVE_ENTRIES)
                .bind(0, now)
                .map(this::entry)
                .list()).stream().map(this::withPendingHits).toList();
    }

    /** Also purges every expired entry, so that the file holds no dead results below the bound. */
    @Override
    public synchronized void put(CacheEntry entry) {
        put(entry, (GroupBound) null);
    }

    @Override
    public synchronized List<String> put(CacheEntry entry, GroupBound bound) {
        pendingUses.remove(entry.key());
        long now = clock.millis();
        return write(handle -> insert(handle, entry, bound, now));
    }

    private List<String> insert(Handle handle, CacheEntry entry, GroupBound bound, long now) {
        handle.execute("DELETE FROM cache_entries WHERE cache_key = ?", entry.key());
        deleteExpired(handle, now);
        handle.createUpdate(INSERT_ENTRY)
                .bind(0, entry.key())
                .bind(1, entry.createdAt().toEpochMilli())
                .bind(2, entry.expiresAt().toEpochMilli())
                .bind(3, entry.hits())
                .bind(4, entry.executionTime().toNanos())
                .bind(5, entry.estimatedBytes())
                .bind(6, ToolVersionsJson.write(entry.toolVersions()))
                .bind(7, entry.value())
                .bind(8, entry.console())
                .bind(9, entry.label())
                .bind(10, bound == null ? null : bound.group())
                .bind(11, entry.checksum())
                .execute();
        if (!entry.toolVersions().isEmpty()) {
            PreparedBatch tools = handle.prepareBatch(
                    "INSERT INTO entry_tools (tool, version, cache_key) VALUES (?, ?, ?)");
            entry.toolVersions().forEach((tool, version) -> tools.add(tool, version, entry.key()));
            tools.execute();
        }
        List<String> evicted = bound == null ? List.of() : evictPastGroupBound(handle, bound);
        evictLeastRecentlyUsed(handle);
        return evicted;
    }

    @Override
    public synchronized boolean remove(String key) {
        pendingUses.remove(key);
        return write(handle -> handle.execute("DELETE FROM cache_entries WHERE cache_key = ?", key)) > 0;
    }

    @Override
    public synchronized int removeByTool(String tool) {
        Objects.requireNonNull(tool, "tool must not be null");
        return write(handle -> handle.execute(
                "DELETE FROM cache_entries WHERE cache_key IN (SELECT cache_key FROM entry_tools WHERE tool = ?)", tool));
    }

    @Override
    public synchronized int removeByTool(String tool, String version) {
        Objects.requireNonNull(tool, "tool must not be null");
        Objects.requireNonNull(version, "version must not be null");
        return write(handle -> handle.execute("""
                DELETE FROM cache_entries
                 WHERE cache_key IN (SELECT cache_key FROM entry_tools WHERE tool = ? AND version = ?)""", tool, version));
    }

    /** When the glob matches every entry and the disk is too full to commit the deletion, see {@link #clear()}. */
    @Override
    public synchronized int removeByPattern(Glob glob) {
        List<String> keys = jdbi.withHandle(handle -> handle.createQuery("SELECT cache_key FROM cache_entries")
                .mapTo(String.class).list());
        List<String> matching = keys.stream().filter(glob::matches).toList();
        if (matching.isEmpty()) {
            return 0;
        }
        try {
            return write(handle -> {
                PreparedBatch delete = handle.prepareBatch("DELETE FROM cache_entries WHERE cache_key = ?");
                matching.forEach(delete::add);
                return Arrays.stream(delete.execute()).sum();
            });
        } catch (RuntimeException e) {
            if (matching.size() < keys.size() || !isDiskFull(e)) {
                throw e;
            }
            replaceFile(e);
            return matching.size();
        }
    }

    /**
     * On a disk too full to commit the deletion, the file is removed and a new one started in
     * its place (said in one line): counters and last-seen versions then go too.
     */
    @Override
    public synchronized void clear() {
        pendingUses.clear();
        try {
            write(handle -> {
                handle.execute("DELETE FROM entry_tools");
                return handle.execute("DELETE FROM cache_entries");
            });
        } catch (RuntimeException e) {
            if (!isDiskFull(e)) {
                throw e;
            }
            replaceFile(e);
        }
    }

    @Override
    public synchronized int size() {
        long now = clock.millis();
        return write(handle -> {
            deleteExpired(handle, now);
            return handle.createQuery("SELECT count(*) FROM cache_entries").mapTo(Integer.class).one();
        });
    }

    @Override
    public synchronized long estimatedBytes() {
        return jdbi.withHandle(handle -> handle.createQuery("SELECT coalesce(sum(estimated_bytes), 0) FROM cache_entries")
                .mapTo(Long.class)
                .one());
    }

    @Override
    public synchronized int purgeExpired() {
        long now = clock.millis();
        return write(handle -> deleteExpired(handle, now));
    }

    @Override
    public StoreCounters counters() {
        return figures;
    }

    @Override
    public WriteGenerations writeGenerations() {
        return writes;
    }

    private static long generation(Handle handle, String server) {
        return handle.createQuery("SELECT generation FROM write_generations WHERE server = ?").bind(0, server)
                .mapTo(Long.class).findOne().orElse(0L);
    }

    /** In the file, so every process on it shares them; the check of a put on condition is in the put's transaction. */
    private final class Writes implements WriteGenerations {
        @Override
        public long current(String server) {
            synchronized (SqliteCacheStore.this) {
                return jdbi.withHandle(handle -> generation(handle, server));
            }
        }

        @Override
        public void advance(String server) {
            synchronized (SqliteCacheStore.this) {
                write(handle -> handle.execute(ADVANCE_GENERATION, server));
            }
        }

        @Override
        public Optional<List<String>> putIfCurrent(CacheEntry entry, GroupBound bound, Map<String, Long> seen) {
            synchronized (SqliteCacheStore.this) {
                long now = clock.millis();
                // an IMMEDIATE transaction holds the file's write lock from its start: no advance comes between
                return write(handle -> {
                    for (Map.Entry<String, Long> noted : seen.entrySet()) {
                        if (generation(handle, noted.getKey()) != noted.getValue()) {
                            return Optional.<List<String>>empty();
                        }
                    }
                    return Optional.of(insert(handle, entry, bound, now));
                });
            }
        }
    }





    /** Every counter row, with what is pending added. */
    private Map<String, Long> storedCounters() {
        Map<String, Long> stored = jdbi.withHandle(handle -> handle.createQuery("SELECT name, value FROM counters")
                .map((row, context) -> Map.entry(row.getString(1), row.getLong(2)))
                .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue)));
        pendingCounts.forEach((name, delta) -> stored.merge(name, delta, Long::sum));
        return stored;
    }


    private static Map<Counter, Long> noCounts() {
        Map<Counter, Long> counters = new EnumMap<>(Counter.class);
        for (Counter counter : Counter.values()) {
            counters.put(counter, 0L);
        }
        return counters;
    }



    @Override
    public synchronized Map<String, String> lastSeenVersions(String scope) {
        Objects.requireNonNull(scope, "scope must not be null");
        try {
            PreparedStatement select = keptSelect(SELECT_LAST_SEEN);
            select.setString(1, scope);
            Map<String, String> versions = new HashMap<>();
            try (ResultSet row = select.executeQuery()) {
                while (row.next()) {
                    versions.put(row.getString(1), row.getString(2));
                }
            }
            return Map.copyOf(versions);
        } catch (SQLException | RuntimeException e) {
            throw failedRead(e, "the last-seen tool versions");
        }
    }

    @Override
    public synchronized void recordVersions(String scope, Map<String, String> versions) {
        Objects.requireNonNull(scope, "scope must not be null");
        if (versions.isEmpty()) {
            return;
        }
        write(handle -> {
            PreparedBatch record = handle.prepareBatch(RECORD_VERSION);
            versions.forEach((tool, version) -> record.add(scope, tool, version));
            return record.execute();
        });
    }

    /** Writes what is pending and closes the file; closing twice does nothing. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        try {
            if (hasPending()) {
                write(handle -> null);
            }
        } finally {
            closed = true;
            forgetKeptSelects();
            connection.close();
        }
    }

    private Optional<CacheEntry> live(String key, long now) {
        Optional<CacheEntry> stored = stored(key);
        if (stored.isPresent() && now >= stored.get().expiresAt().toEpochMilli()) {
            pendingUses.remove(key);
            write(handle -> {
                int expired = handle.execute("DELETE FROM cache_entries WHERE cache_key = ? AND expires_at <= ?", key, now);
                addToCounter(handle, Counter.EXPIRATIONS, expired);
                return null;
            });
            return Optional.empty();
        }
        return stored;
    }

    /** The entry stored under {@code key}, expired or not; the statement ends (its read too) before this returns. */
    private Optional<CacheEntry> stored(String key) {
        try {
            PreparedStatement select = keptSelect(SELECT_ENTRY);
            select.setString(1, key);
            try (ResultSet row = select.executeQuery()) {
                return row.next() ? Optional.of(entry(row, null)) : Optional.empty();
            }
        } catch (SQLException | RuntimeException e) {
            throw failedRead(e, key);
        }
    }

    /** A kept select failed: they are prepared again by the next read; the failure as it goes to the caller. */
    private RuntimeException failedRead(Exception e, String what) {
        forgetKeptSelects();
        return e instanceof RuntimeException unchecked ? unchecked
                : new IllegalStateException("cannot read " + what + " from SQLite cache " + file + ": " + e.getMessage(), e);
    }

    private PreparedStatement keptSelect(String sql) throws SQLException {
        PreparedStatement kept = keptSelects.get(sql);
        if (kept == null) {
            kept = connection.openConnection().prepareStatement(sql);
            keptSelects.put(sql, kept);
        }
        return kept;
    }

    /** Closes the kept selects; the next reads prepare them again. */
    private void forgetKeptSelects() {
        for (PreparedStatement kept : keptSelects.values()) {
            try {
                kept.close();
            } catch (SQLException e) {
                // the connection it was on goes, or the next read prepares another
            }
        }
        keptSelects.clear();
    }

    private CacheEntry entry(ResultSet row, StatementContext context) throws SQLException {
        return new CacheEntry(
                row.getString(1),
                row.getString(7),
                row.getString(8),
                Duration.ofNanos(row.getLong(5)),
                toolVersions(row.getString(6)),
                Instant.ofEpochMilli(row.getLong(2)),
                Instant.ofEpochMilli(row.getLong(3)),
                row.getLong(4),
                row.getString(9),
                row.getLong(10));
    }

    /**
     * The {@code tool_versions} column read, the same few texts parsed once: parsing them with
     * Jackson on every hit was a tenth of it. Only what parses is kept, so a bad column still fails each read.
     */
    private Map<String, String> toolVersions(String json) {
        Map<String, String> parsed = parsedToolVersions.get(json);
        if (parsed == null) {
            parsed = Map.copyOf(ToolVersionsJson.read(json));
            parsedToolVersions.put(json, parsed);
        }
        return parsed;
    }

    private CacheEntry withPendingHits(CacheEntry entry) {
        PendingUse use = pendingUses.get(entry.key());
        return use == null ? entry : entry.withHits(entry.hits() + use.hits());
    }

    /** Returns the entry with its hits counted, this one included. */
    private CacheEntry recordUse(CacheEntry entry, long now) {
        notePending(now);
        PendingUse earlier = pendingUses.remove(entry.key());
        long hits = earlier == null ? 1 : earlier.hits() + 1;
        pendingUses.put(entry.key(), new PendingUse(entry.createdAt().toEpochMilli(), hits));
        return entry.withHits(entry.hits() + hits);
    }

    private void notePending(long now) {
        if (!hasPending()) {
            firstPendingAt = now;
        }
    }

    private boolean hasPending() {
        return !pendingUses.isEmpty() || !pendingCounts.isEmpty();
    }

    private void writeIfDue(long now) {
        if (pendingUses.size() >= MAX_PENDING_USES || now - firstPendingAt >= MAX_PENDING_MILLIS) {
            write(handle -> null);
        }
    }

    /** Runs {@code work} in a write transaction that first writes what is pending. */
    private <R> R write(HandleCallback<R, RuntimeException> work) {
        if (unchecked) {
            finishCheck();
        }
        long since = hasPending() ? firstPendingAt : clock.millis();
        R result = jdbi.inTransaction(handle -> {
            handle.execute(START_COUNTING, since);
            writePending(handle);
            return work.withHandle(handle);
        });
        pendingUses.clear();
        pendingCounts.clear();
        countedAgents = null;
        return result;
    }

    private void writePending(Handle handle) {
        if (!pendingUses.isEmpty()) {
            long lastAccess = handle.createQuery("SELECT coalesce(max(last_access), 0) FROM cache_entries")
                    .mapTo(Long.class)
                    .one();
            PreparedBatch uses = handle.prepareBatch(RECORD_USE);
            for (Map.Entry<String, PendingUse> use : pendingUses.entrySet()) {
                uses.add(use.getValue().hits(), ++lastAccess, use.getKey(), use.getValue().createdAt());
            }
            uses.execute();
        }
        Set<String> inFile = agentsIn(handle);
        pendingCounts.forEach((name, delta) -> handle.execute(ADD_TO_COUNTER, cappedAgentRow(name, inFile), delta));
    }

    /** The agents whose counters the file holds. */
    private static Set<String> agentsIn(Handle handle) {
        Set<String> agents = new HashSet<>();
        handle.createQuery("SELECT name FROM counters WHERE name LIKE 'agent:%'").mapTo(String.class)
                .forEach(name -> agents.add(agentOf(name)));
        return agents;
    }

    private static String agentOf(String row) {
        return row.substring(row.indexOf(':', AGENT_COUNTER_PREFIX.length()) + 1);
    }

    /**
     * The row a pending count goes to: an agent's row is another process's {@code other} when the
     * file counts {@link StoreCounters#MAX_AGENTS} others already (checked in the write's transaction).
     */
    private static String cappedAgentRow(String row, Set<String> inFile) {
        if (!row.startsWith(AGENT_COUNTER_PREFIX)) {
            return row;
        }
        String agent = agentOf(row);
        if (!admits(inFile, agent)) {
            return row.substring(0, row.length() - agent.length()) + StoreCounters.OTHER_AGENT;
        }
        inFile.add(agent);
        return row;
    }

    /** Whether {@code agent} is counted by its own name among {@code counted}. */
    private static boolean admits(Set<String> counted, String agent) {
        if (counted.contains(agent) || agent.equals(StoreCounters.OTHER_AGENT)) {
            return true;
        }
        long named = counted.stream().filter(name -> !name.equals(StoreCounters.OTHER_AGENT)).count();
        return named < StoreCounters.MAX_AGENTS;
    }

    /** Evicts the group's least recently used entries past its bound; returns their keys, eldest first. */
    private static List<String> evictPastGroupBound(Handle handle, GroupBound bound) {
        int excess = handle.createQuery("SELECT count(*) FROM cache_entries WHERE bound_group = ?")
                .bind(0, bound.group()).mapTo(Integer.class).one() - bound.maxEntries();
        if (excess <= 0) {
            return List.of();
        }
        List<String> eldest = handle.createQuery(
                        "SELECT cache_key FROM cache_entries WHERE bound_group = ? ORDER BY last_access LIMIT ?")
                .bind(0, bound.group()).bind(1, excess).mapTo(String.class).list();
        PreparedBatch delete = handle.prepareBatch("DELETE FROM cache_entries WHERE cache_key = ?");
        eldest.forEach(delete::add);
        delete.execute();
        addToCounter(handle, Counter.EVICTIONS, eldest.size());
        return eldest;
    }

    private void evictLeastRecentlyUsed(Handle handle) {
        int excess = handle.createQuery("SELECT count(*) FROM cache_entries").mapTo(Integer.class).one() - maxEntries;
        if (excess > 0) {
            int evicted = handle.execute("""
                    DELETE FROM cache_entries
                     WHERE rowid IN (SELECT rowid FROM cache_entries ORDER BY last_access LIMIT ?)""", excess);
            addToCounter(handle, Counter.EVICTIONS, evicted);
        }
    }

    private static int deleteExpired(Handle handle, long now) {
        int expired = handle.execute("DELETE FROM cache_entries WHERE expires_at <= ?", now);
        addToCounter(handle, Counter.EXPIRATIONS, expired);
        return expired;
    }

    private static void addToCounter(Handle handle, Counter counter, long delta) {
        if (delta != 0) {
            handle.execute(ADD_TO_COUNTER, counter.name(), delta);
        }
    }

    private record PendingUse(long createdAt, long hits) {
    }


    /** The figures kept beside the entries; see {@link StoreCounters}. */
    private final class Counters implements StoreCounters {
        @Override
        public void increment(String tool, String agent, Map<Counter, Long> deltas) {
            synchronized (SqliteCacheStore.this) {
                long now = clock.millis();
                String countedAs = agent == null ? null : countedAs(agent);
                deltas.forEach((counter, delta) -> {
                    if (delta != 0) {
                        notePending(now);
                        pendingCounts.merge(counter.name(), delta, Long::sum);
                        if (tool != null) {
                            pendingCounts.merge(TOOL_COUNTER_PREFIX + counter.name() + ":" + tool, delta, Long::sum);
                        }
                        if (countedAs != null) {
                            pendingCounts.merge(AGENT_COUNTER_PREFIX + counter.name() + ":" + countedAs, delta, Long::sum);
                        }
                    }
                });
                writeIfDue(now);
            }
        }

        /** The agent a count of {@code agent} goes to: itself, or {@code other} past the cap. */
        private String countedAs(String agent) {
            if (countedAgents == null) {
                countedAgents = jdbi.withHandle(SqliteCacheStore::agentsIn);
                pendingCounts.keySet().stream().filter(row -> row.startsWith(AGENT_COUNTER_PREFIX))
                        .forEach(row -> countedAgents.add(agentOf(row)));
            }
            String counted = admits(countedAgents, agent) ? agent : StoreCounters.OTHER_AGENT;
            countedAgents.add(counted);
            return counted;
        }

        @Override
        public Map<String, Map<Counter, Long>> perAgent() {
            synchronized (SqliteCacheStore.this) {
                Map<String, Map<Counter, Long>> byAgent = new TreeMap<>();
                storedCounters().forEach((name, value) -> {
                    if (name.startsWith(AGENT_COUNTER_PREFIX)) {
                        int colon = name.indexOf(':', AGENT_COUNTER_PREFIX.length());
                        Counter.named(name.substring(AGENT_COUNTER_PREFIX.length(), colon)).ifPresent(counter ->
                                byAgent.computeIfAbsent(name.substring(colon + 1), agent -> noCounts()).put(counter, value));
                    }
                });
                return byAgent;
            }
        }

        @Override
        public Map<Counter, Long> totals() {
            synchronized (SqliteCacheStore.this) {
                Map<String, Long> stored = storedCounters();
                Map<Counter, Long> counters = new EnumMap<>(Counter.class);
                for (Counter counter : Counter.values()) {
                    counters.put(counter, stored.getOrDefault(counter.name(), 0L));
                }
                return counters;
            }
        }

        @Override
        public Map<String, Map<Counter, Long>> perTool() {
            synchronized (SqliteCacheStore.this) {
                Map<String, Map<Counter, Long>> byTool = new TreeMap<>();
                storedCounters().forEach((name, value) -> {
                    if (name.startsWith(TOOL_COUNTER_PREFIX)) {
                        int colon = name.indexOf(':', TOOL_COUNTER_PREFIX.length());
                        Counter.named(name.substring(TOOL_COUNTER_PREFIX.length(), colon)).ifPresent(counter ->
                                byTool.computeIfAbsent(name.substring(colon + 1), tool -> noCounts()).put(counter, value));
                    }
                });
                return byTool;
            }
        }

        @Override
        public void zero() {
            synchronized (SqliteCacheStore.this) {
                long now = clock.millis();
                write(handle -> {
                    handle.execute("DELETE FROM counters");
                    handle.execute(ADD_TO_COUNTER, SINCE, now);
                    return null;
                });
            }
        }

        @Override
        public Optional<Instant> countingSince() {
            synchronized (SqliteCacheStore.this) {
                return jdbi.withHandle(handle -> {
                    Optional<Long> since = handle.createQuery("SELECT value FROM counters WHERE name = ?")
                            .bind(0, SINCE).mapTo(Long.class).findOne();
                    if (since.isEmpty() && hasPending()
                            && handle.createQuery("SELECT count(*) FROM counters").mapTo(Long.class).one() == 0) {
                        return Optional.of(firstPendingAt);
                    }
                    return since;
                }).map(Instant::ofEpochMilli);
            }
        }
    }
}
