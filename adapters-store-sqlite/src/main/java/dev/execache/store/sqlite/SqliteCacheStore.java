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
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.StampedLock;
import java.util.function.Function;
import java.util.stream.Collectors;
import dev.execache.store.sqlite.Schema.StructureCheck;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.HandleCallback;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.statement.PreparedBatch;
import org.jdbi.v3.core.statement.StatementContext;
import org.sqlite.SQLiteErrorCode;
import org.sqlite.SQLiteException;

/**
 * A {@link CacheStore} in one SQLite file that several processes may share: write-ahead
 * logging, a busy timeout and short {@code IMMEDIATE} transactions. A file that is not an
 * execache cache, or is from a newer execache, is refused and left as it was; one from an
 * older execache is migrated.
 *
 * <p>A hit only reads, on a connection of its own ({@link Readers}): under write-ahead logging it
 * waits neither for a write under way, nor for this store's writer, nor for another process's.
 * Writes go one at a time through one connection. The hit count and recency a hit earns, the
 * expired entries reads meet, and counter increments are kept in memory ("unwritten") and written
 * with this store's next write, or by a write in the background once {@value #MAX_PENDING_USES}
 * entries have been used, once the oldest is {@value #MAX_PENDING_MILLIS} ms old, or once a read
 * met an expired entry; and at {@link #close}. Until then other processes see the previous counts
 * and recency; this one sees them added.
 */
public final class SqliteCacheStore implements CacheStore {
    private final StoreCounters counters = new Counters();
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
     * {@link Schema#checkStructure}): about 0.4 s of work on one core of a quiet machine, a cache
     * file of about 600 MB. A larger file is checked whole before the first write into it.
     */
    static final long OPEN_CHECK_STEPS = 1_000_000;

    private static final System.Logger LOG = System.getLogger(SqliteCacheStore.class.getName());

    private final Path file;
    private final int maxEntries;
    private final Clock clock;
    private final long openCheckSteps;
    private final Readers readers;
    /** Held by every write, one at a time; guards {@link #connection}, {@link #jdbi}, {@link #unchecked} and {@link #closed}. */
    private final ReentrantLock writer = new ReentrantLock();
    /**
     * Set when the check of the file's structure at open stopped at its bound: the file may be
     * damaged, so the check runs to its end before anything is written into it.
     */
    private boolean unchecked;
    /** Replaced, with {@link #jdbi}, only when the file is (see {@link #replaceFile}). */
    private SingleConnection connection;
    private Jdbi jdbi;
    private volatile boolean closed;
    /** Guards {@link #unwritten}, {@link #inFlight} and {@link #countedAgents}; held only for a few map operations. */
    private final Object unwrittenLock = new Object();
    private Unwritten unwritten = new Unwritten();
    /** What the write under way took from {@link #unwritten}: still added to what reads find until it commits. */
    private Unwritten inFlight = Unwritten.NONE;
    /** The agents counted in the file or unwritten, as last read from the file; null: read it again. */
    private Set<String> countedAgents;
    /**
     * Write-locked only while a write commits and {@link #inFlight} is let go: a read that adds
     * what is unwritten to what it read from the file checks that no commit came between the two
     * (optimistically, without waiting), so that nothing is counted twice or missed.
     */
    private final StampedLock commits = new StampedLock();
    /**
     * Writes what is unwritten when it is due, so that no read waits for that write, and checks
     * again when what is not due yet will be (see {@link #writeBehindIfDue}). Its one thread ends
     * after a few idle seconds (none while a check is pending), so that a store nobody closed keeps none.
     */
    private final ScheduledThreadPoolExecutor writeBehind = writeBehindExecutor();
    private final AtomicBoolean writeBehindQueued = new AtomicBoolean();
    /** A check of {@link #writeBehindIfDue} is scheduled for when the oldest unwritten use is due. */
    private final AtomicBoolean dueCheckScheduled = new AtomicBoolean();
    /** A write in the background that failed, told to the next count (a count is a write). */
    private final AtomicReference<RuntimeException> writeBehindFailure = new AtomicReference<>();
    /**
     * {@link #toolVersions} parsed, by the column's text. Emptied when it holds more than
     * {@value #PARSED_TOOL_VERSIONS}: an entry's tools are a few texts repeated, and reads on many
     * threads share it.
     */
    private final Map<String, Map<String, String>> parsedToolVersions = new ConcurrentHashMap<>();
    private static final int PARSED_TOOL_VERSIONS = 256;

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
        this.readers = new Readers(this.file);
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
            check = Schema.checkStructure(opened.jdbi(), openCheckSteps);
            if (!check.finished() && !CacheFile.opensWithoutWriting(file)) {
                check = Schema.checkStructure(opened.jdbi(), Schema.WHOLE);
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
        forgetUnwritten();
        connection.close();
        attach(replaceDamaged(damage.get()));
        readers.fileReplaced();
    }

    private void forgetUnwritten() {
        synchronized (unwrittenLock) {
            unwritten = new Unwritten();
            inFlight = Unwritten.NONE;
            countedAgents = null;
        }
    }

    /** Uses {@code opened} from now on, making it a current cache first. */
    private void attach(SingleConnection opened) {
        Jdbi made = opened.jdbi();
        try {
            Schema.open(made, file);
        } catch (RuntimeException e) {
            opened.close();
            throw e;
        }
        this.connection = opened;
        this.jdbi = made;
    }

    /**
     * Removes the file and starts a new, empty one in its place, when removing every entry
     * cannot commit because the disk is full: it is only a cache, and a full disk must be
     * freeable through execache. Its counters and last-seen tool versions go with it; said in one line.
     */
    private void replaceFile(RuntimeException cannotCommit) {
        unchecked = false;
        forgetUnwritten();
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
            readers.fileReplaced();
        } catch (RuntimeException e) {
            closed = true;
            readers.close();
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
    public Optional<CacheEntry> get(String key) {
        long now = clock.millis();
        Optional<CacheEntry> hit = live(key, now, true);
        writeBehindIfDue(now);
        return hit;
    }

    @Override
    public Optional<CacheEntry> peek(String key) {
        long now = clock.millis();
        Optional<CacheEntry> live = live(key, now, false);
        writeBehindIfDue(now);
        return live;
    }

    @Override
    public List<CacheEntry> entries() {
        long now = clock.millis();
        return withUnwritten(reader -> reader.jdbi().withHandle(handle -> handle.createQuery(SELECT_LIVE_ENTRIES)
                        .bind(0, now)
                        .map(this::entry)
                        .list()),
                stored -> stored.stream().map(this::withUnwrittenHits).toList());
    }

    /** Also purges every expired entry, so that the file holds no dead results below the bound. */
    @Override
    public void put(CacheEntry entry) {
        put(entry, (GroupBound) null);
    }

    @Override
    public List<String> put(CacheEntry entry, GroupBound bound) {
        synchronized (unwrittenLock) {
            unwritten.uses.remove(entry.key());
        }
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
    public boolean remove(String key) {
        synchronized (unwrittenLock) {
            unwritten.uses.remove(key);
        }
        return write(handle -> handle.execute("DELETE FROM cache_entries WHERE cache_key = ?", key)) > 0;
    }

    @Override
    public int removeByTool(String tool) {
        Objects.requireNonNull(tool, "tool must not be null");
        return write(handle -> handle.execute(
                "DELETE FROM cache_entries WHERE cache_key IN (SELECT cache_key FROM entry_tools WHERE tool = ?)", tool));
    }

    @Override
    public int removeByTool(String tool, String version) {
        Objects.requireNonNull(tool, "tool must not be null");
        Objects.requireNonNull(version, "version must not be null");
        return write(handle -> handle.execute("""
                DELETE FROM cache_entries
                 WHERE cache_key IN (SELECT cache_key FROM entry_tools WHERE tool = ? AND version = ?)""", tool, version));
    }

    /** When the glob matches every entry and the disk is too full to commit the deletion, see {@link #clear()}. */
    @Override
    public int removeByPattern(Glob glob) {
        writer.lock();
        try {
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
        } finally {
            writer.unlock();
        }
    }

    /**
     * On a disk too full to commit the deletion, the file is removed and a new one started in
     * its place (said in one line): counters and last-seen versions then go too.
     */
    @Override
    public void clear() {
        writer.lock();
        try {
            synchronized (unwrittenLock) {
                unwritten.uses.clear();
            }
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
        } finally {
            writer.unlock();
        }
    }

    @Override
    public int size() {
        long now = clock.millis();
        return write(handle -> {
            deleteExpired(handle, now);
            return handle.createQuery("SELECT count(*) FROM cache_entries").mapTo(Integer.class).one();
        });
    }

    @Override
    public long estimatedBytes() {
        return read("the estimated bytes", reader -> reader.jdbi().withHandle(handle -> handle.createQuery(
                "SELECT coalesce(sum(estimated_bytes), 0) FROM cache_entries").mapTo(Long.class).one()));
    }

    @Override
    public int purgeExpired() {
        long now = clock.millis();
        return write(handle -> deleteExpired(handle, now));
    }

    @Override
    public StoreCounters counters() {
        return counters;
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
            return read("write generations", reader -> reader.jdbi().withHandle(handle -> generation(handle, server)));
        }

        @Override
        public void advance(String server) {
            write(handle -> handle.execute(ADVANCE_GENERATION, server));
        }

        @Override
        public Optional<List<String>> putIfCurrent(CacheEntry entry, GroupBound bound, Map<String, Long> seen) {
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

    /** Every counter row, with what is unwritten added. */
    private Map<String, Long> storedCounters() {
        return withUnwritten(reader -> reader.jdbi().withHandle(handle -> handle.createQuery("SELECT name, value FROM counters")
                        .map((row, context) -> Map.entry(row.getString(1), row.getLong(2)))
                        .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue))),
                stored -> {
                    Map<String, Long> counts = new HashMap<>(stored);
                    inFlight.counts.forEach((name, delta) -> counts.merge(name, delta, Long::sum));
                    unwritten.counts.forEach((name, delta) -> counts.merge(name, delta, Long::sum));
                    return counts;
                });
    }

    @Override
    public Map<String, String> lastSeenVersions(String scope) {
        Objects.requireNonNull(scope, "scope must not be null");
        return read("the last-seen tool versions", reader -> {
            PreparedStatement select = reader.select(SELECT_LAST_SEEN);
            select.setString(1, scope);
            Map<String, String> versions = new HashMap<>();
            try (ResultSet row = select.executeQuery()) {
                while (row.next()) {
                    versions.put(row.getString(1), row.getString(2));
                }
            }
            return Map.copyOf(versions);
        });
    }

    @Override
    public void recordVersions(String scope, Map<String, String> versions) {
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

    /** Writes what is unwritten and closes the file; closing twice does nothing. */
    @Override
    public void close() {
        writeBehind.shutdown();
        writer.lock();
        try {
            if (closed) {
                return;
            }
            try {
                if (hasUnwritten()) {
                    write(handle -> null);
                }
            } finally {
                closed = true;
                readers.close();
                connection.close();
            }
        } finally {
            writer.unlock();
        }
    }

    /**
     * The entry under {@code key} unless it expired, with the hits not yet written added, and
     * this use counted when {@code use}. An expired one is noted, to be removed (and counted) by
     * the next write.
     */
    private Optional<CacheEntry> live(String key, long now, boolean use) {
        return withUnwritten(reader -> stored(reader, key), stored -> {
            if (stored.isEmpty()) {
                return stored;
            }
            CacheEntry entry = stored.get();
            long createdAt = entry.createdAt().toEpochMilli();
            if (now >= entry.expiresAt().toEpochMilli()) {
                unwritten.uses.remove(key);
                if (!unwritten.expired.containsKey(key) && !inFlight.expired.containsKey(key)) {
                    unwritten.noteFirst(now);
                    unwritten.expired.put(key, createdAt);
                    unwritten.counts.merge(Counter.EXPIRATIONS.name(), 1L, Long::sum);
                }
                return Optional.empty();
            }
            long hits = entry.hits() + inFlight.hits(key, createdAt) + unwritten.hits(key, createdAt);
            if (use) {
                unwritten.noteFirst(now);
                PendingUse earlier = unwritten.uses.remove(key);
                long used = earlier == null || earlier.createdAt() != createdAt ? 1 : earlier.hits() + 1;
                unwritten.uses.put(key, new PendingUse(createdAt, used));
                hits++;
            }
            return Optional.of(entry.withHits(hits));
        });
    }

    /** What the file holds under {@code key}, expired or not; the statement ends (its read too) before this returns. */
    private Optional<CacheEntry> stored(Readers.Reader reader, String key) throws SQLException {
        PreparedStatement select = reader.select(SELECT_ENTRY);
        select.setString(1, key);
        try (ResultSet row = select.executeQuery()) {
            return row.next() ? Optional.of(entry(row, null)) : Optional.empty();
        }
    }

    /** A read of the file on a reader; a failure names what was read. */
    private <R> R read(String what, Readers.Read<R> read) {
        try {
            return readers.read(read);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot read " + what + " from SQLite cache " + file + ": " + e.getMessage(), e);
        }
    }

    /**
     * Reads the file, then, holding {@link #unwrittenLock}, gives what was read to {@code withUnwritten}
     * to add what is not written yet, so long as no write committed in between (which would make
     * what it wrote count twice, or, let go from {@link #inFlight}, not at all); else reads again.
     * Twice in a row a commit came between: the third read waits for the commit to end.
     */
    private <T, R> R withUnwritten(Readers.Read<T> fromFile, Function<T, R> withUnwritten) {
        for (int attempt = 0; ; attempt++) {
            boolean waits = attempt >= 2;
            long stamp = waits ? commits.readLock() : commits.tryOptimisticRead();
            try {
                T stored = read("entries", fromFile);
                synchronized (unwrittenLock) {
                    if (waits || stamp != 0 && commits.validate(stamp)) {
                        return withUnwritten.apply(stored);
                    }
                }
            } finally {
                if (waits) {
                    commits.unlockRead(stamp);
                }
            }
        }
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
            if (parsedToolVersions.size() >= PARSED_TOOL_VERSIONS) {
                parsedToolVersions.clear();
            }
            parsedToolVersions.put(json, parsed);
        }
        return parsed;
    }

    /** Holding {@link #unwrittenLock}. */
    private CacheEntry withUnwrittenHits(CacheEntry entry) {
        long createdAt = entry.createdAt().toEpochMilli();
        long unwrittenHits = inFlight.hits(entry.key(), createdAt) + unwritten.hits(entry.key(), createdAt);
        return unwrittenHits == 0 ? entry : entry.withHits(entry.hits() + unwrittenHits);
    }

    /** For tests: a write has taken what was unwritten and not yet committed it. */
    boolean writeUnderWay() {
        synchronized (unwrittenLock) {
            return inFlight != Unwritten.NONE;
        }
    }

    private boolean hasUnwritten() {
        synchronized (unwrittenLock) {
            return !unwritten.isEmpty();
        }
    }

    /**
     * Hands the write of what is unwritten to the write-behind thread once it is due: enough
     * entries used, the oldest old enough, or an expired entry met. The caller does not wait for it.
     */
    private void writeBehindIfDue(long now) {
        boolean due;
        long untilDue;
        synchronized (unwrittenLock) {
            due = unwritten.uses.size() >= MAX_PENDING_USES || !unwritten.expired.isEmpty()
                    || !unwritten.isEmpty() && now - unwritten.firstAt >= MAX_PENDING_MILLIS;
            untilDue = unwritten.isEmpty() ? -1 : Math.max(1, unwritten.firstAt + MAX_PENDING_MILLIS - now);
        }
        if (due && writeBehindQueued.compareAndSet(false, true)) {
            try {
                writeBehind.execute(this::writeUnwritten);
            } catch (RejectedExecutionException closing) {
                writeBehindQueued.set(false);
            }
        } else if (!due && untilDue > 0 && dueCheckScheduled.compareAndSet(false, true)) {
            // Not due yet, and perhaps no read or write comes after this one (an idle process, or
            // uses noted while a write that took the earlier ones waited for another process's
            // lock): without this check they would stay unwritten, unseen by other processes,
            // until this store's next write or close. It asks the store's clock again, so it
            // writes nothing early; not due then (the clock lags the timer), it checks again.
            try {
                writeBehind.schedule(() -> {
                    dueCheckScheduled.set(false);
                    writeBehindIfDue(clock.millis());
                }, untilDue, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException closing) {
                dueCheckScheduled.set(false);
            }
        }
    }

    private static ScheduledThreadPoolExecutor writeBehindExecutor() {
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, work -> {
            Thread thread = new Thread(work, "execache-sqlite-write-behind");
            thread.setDaemon(true);
            return thread;
        });
        executor.setKeepAliveTime(5, TimeUnit.SECONDS);
        executor.allowCoreThreadTimeOut(true);
        // close writes what is unwritten itself: a pending check would only keep the thread
        executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        return executor;
    }

    private void writeUnwritten() {
        writeBehindQueued.set(false);
        writer.lock();
        try {
            if (!closed && hasUnwritten()) {
                write(handle -> null);
            }
        } catch (RuntimeException e) {
            writeBehindFailure.set(e);
        } finally {
            writer.unlock();
        }
    }

    /**
     * Runs {@code work} in a write transaction that first writes what is unwritten; what it took
     * stays added to what reads find until the transaction commits, and goes back to be written
     * later if it does not.
     */
    private <R> R write(HandleCallback<R, RuntimeException> work) {
        writer.lock();
        try {
            if (closed) {
                throw new IllegalStateException("SQLite cache " + file + " is closed");
            }
            if (unchecked) {
                finishCheck();
            }
            Unwritten taken;
            synchronized (unwrittenLock) {
                taken = unwritten;
                unwritten = new Unwritten();
                inFlight = taken;
            }
            long now = clock.millis();
            long since = taken.isEmpty() ? now : taken.firstAt;
            try {
                return jdbi.withHandle(handle -> {
                    handle.begin();
                    boolean committed = false;
                    try {
                        handle.execute(START_COUNTING, since);
                        write(handle, taken, now);
                        R result = work.withHandle(handle);
                        long stamp = commits.writeLock();
                        try {
                            handle.commit();
                            committed = true;
                            synchronized (unwrittenLock) {
                                inFlight = Unwritten.NONE;
                                countedAgents = null;
                            }
                        } finally {
                            commits.unlockWrite(stamp);
                        }
                        return result;
                    } finally {
                        if (!committed) {
                            rollBack(handle);
                        }
                    }
                });
            } catch (RuntimeException e) {
                synchronized (unwrittenLock) {
                    unwritten = taken.followedBy(unwritten);
                    inFlight = Unwritten.NONE;
                }
                throw e;
            }
        } finally {
            writer.unlock();
        }
    }

    private static void rollBack(Handle handle) {
        try {
            handle.rollback();
        } catch (RuntimeException e) {
            // what failed before is what the caller hears of
        }
    }

    /** Writes what reads noted: the uses of entries (hits, recency), the expired entries met, the counts. */
    private static void write(Handle handle, Unwritten taken, long now) {
        Map<String, Long> counts = new LinkedHashMap<>(taken.counts);
        if (!taken.expired.isEmpty()) {
            PreparedBatch expire = handle.prepareBatch(
                    "DELETE FROM cache_entries WHERE cache_key = ? AND created_at = ? AND expires_at <= ?");
            taken.expired.forEach((key, createdAt) -> expire.add(key, createdAt, now));
            int[] removed = expire.execute();
            // one that is gone already was removed, and counted, by a write of its own (another process's purge)
            long goneAlready = Arrays.stream(removed).filter(rows -> rows == 0).count();
            counts.merge(Counter.EXPIRATIONS.name(), -goneAlready, Long::sum);
        }
        if (!taken.uses.isEmpty()) {
            long lastAccess = handle.createQuery("SELECT coalesce(max(last_access), 0) FROM cache_entries")
                    .mapTo(Long.class)
                    .one();
            PreparedBatch uses = handle.prepareBatch(RECORD_USE);
            for (Map.Entry<String, PendingUse> use : taken.uses.entrySet()) {
                uses.add(use.getValue().hits(), ++lastAccess, use.getKey(), use.getValue().createdAt());
            }
            uses.execute();
        }
        Set<String> inFile = agentsIn(handle);
        counts.forEach((name, delta) -> {
            if (delta != 0) {
                handle.execute(ADD_TO_COUNTER, cappedAgentRow(name, inFile), delta);
            }
        });
    }

    /** The agents whose counters the file holds. */
    private static Set<String> agentsIn(Handle handle) {
        Set<String> agents = new HashSet<>();
        handle.createQuery("SELECT name FROM counters WHERE name LIKE 'agent:%'").mapTo(String.class)
                .forEach(name -> agents.add(agentOf(name)));
        return agents;
    }

    private static String agentOf(String row) {
        return StoreCounters.nameInRow(row, StoreCounters.AGENT_ROW);
    }

    /**
     * The row an unwritten count goes to: an agent's row is another process's {@code other} when the
     * file counts {@link StoreCounters#MAX_AGENTS} others already (checked in the write's transaction).
     */
    private static String cappedAgentRow(String row, Set<String> inFile) {
        if (!row.startsWith(StoreCounters.AGENT_ROW)) {
            return row;
        }
        String agent = agentOf(row);
        String countedAs = StoreCounters.countedAs(inFile, agent);
        inFile.add(countedAs);
        return row.substring(0, row.length() - agent.length()) + countedAs;
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

    /**
     * What reads noted and no write has written yet. Not changed once a write took it (reads go on
     * adding to it while that write is under way); changed only holding {@link #unwrittenLock}.
     */
    private static final class Unwritten {
        static final Unwritten NONE = new Unwritten();

        /** By key, in order of use, the oldest first; the use is of the entry made at {@code createdAt}. */
        final LinkedHashMap<String, PendingUse> uses = new LinkedHashMap<>();
        /** By counter row name. */
        final Map<String, Long> counts = new LinkedHashMap<>();
        /** Expired entries reads met, by key: when the one met was made (not one put since). */
        final Map<String, Long> expired = new LinkedHashMap<>();
        long firstAt;

        boolean isEmpty() {
            return uses.isEmpty() && counts.isEmpty() && expired.isEmpty();
        }

        void noteFirst(long now) {
            if (isEmpty()) {
                firstAt = now;
            }
        }

        long hits(String key, long createdAt) {
            PendingUse use = uses.get(key);
            return use != null && use.createdAt() == createdAt ? use.hits() : 0;
        }

        /** This, which a write failed to write, with what was noted since, to be written next. */
        Unwritten followedBy(Unwritten later) {
            Unwritten merged = new Unwritten();
            merged.firstAt = isEmpty() ? later.firstAt : later.isEmpty() ? firstAt : Math.min(firstAt, later.firstAt);
            merged.uses.putAll(uses);
            later.uses.forEach((key, use) -> merged.uses.merge(key, use, (older, newer) ->
                    older.createdAt() == newer.createdAt() ? new PendingUse(newer.createdAt(), older.hits() + newer.hits())
                            : newer));
            merged.counts.putAll(counts);
            later.counts.forEach((name, delta) -> merged.counts.merge(name, delta, Long::sum));
            merged.expired.putAll(expired);
            later.expired.forEach(merged.expired::putIfAbsent);
            return merged;
        }
    }

    /** The figures kept beside the entries; see {@link StoreCounters}. */
    private final class Counters implements StoreCounters {
        /**
         * Counts are written behind, as hits are; a write in the background that failed is told
         * here, once, as a failed write of the caller's own would be.
         */
        @Override
        public void increment(String tool, String agent, Map<Counter, Long> deltas) {
            long now = clock.millis();
            Set<String> inFile = null;
            while (true) {
                synchronized (unwrittenLock) {
                    if (agent == null || countedAgents != null || inFile != null) {
                        if (agent != null && countedAgents == null) {
                            countedAgents = inFile;
                            unwrittenAgents(inFlight).forEach(countedAgents::add);
                            unwrittenAgents(unwritten).forEach(countedAgents::add);
                        }
                        String countedAs = agent == null ? null : countedAs(agent);
                        deltas.forEach((counter, delta) -> {
                            if (delta != 0) {
                                unwritten.noteFirst(now);
                                unwritten.counts.merge(counter.name(), delta, Long::sum);
                                if (tool != null) {
                                    unwritten.counts.merge(StoreCounters.toolRow(counter, tool), delta, Long::sum);
                                }
                                if (countedAs != null) {
                                    unwritten.counts.merge(StoreCounters.agentRow(counter, countedAs), delta, Long::sum);
                                }
                            }
                        });
                        break;
                    }
                }
                // read outside the lock, which reads hold
                inFile = read("the counted agents", reader -> reader.jdbi().withHandle(SqliteCacheStore::agentsIn));
            }
            writeBehindIfDue(now);
            RuntimeException failed = writeBehindFailure.getAndSet(null);
            if (failed != null) {
                throw failed;
            }
        }

        private static List<String> unwrittenAgents(Unwritten noted) {
            return noted.counts.keySet().stream().filter(row -> row.startsWith(AGENT_ROW))
                    .map(SqliteCacheStore::agentOf).toList();
        }

        /** The agent a count of {@code agent} goes to: itself, or {@code other} past the cap. Holding {@link #unwrittenLock}. */
        private String countedAs(String agent) {
            String counted = StoreCounters.countedAs(countedAgents, agent);
            countedAgents.add(counted);
            return counted;
        }

        @Override
        public Map<String, Map<Counter, Long>> perAgent() {
            Map<String, Map<Counter, Long>> byAgent = new TreeMap<>();
            storedCounters().forEach((name, value) -> StoreCounters.addRow(name, value, AGENT_ROW, byAgent));
            return byAgent;
        }

        @Override
        public Map<Counter, Long> totals() {
            Map<String, Long> stored = storedCounters();
            Map<Counter, Long> counters = StoreCounters.noCounts();
            counters.replaceAll((counter, zero) -> stored.getOrDefault(counter.name(), 0L));
            return counters;
        }

        @Override
        public Map<String, Map<Counter, Long>> perTool() {
            Map<String, Map<Counter, Long>> byTool = new TreeMap<>();
            storedCounters().forEach((name, value) -> StoreCounters.addRow(name, value, TOOL_ROW, byTool));
            return byTool;
        }

        @Override
        public void zero() {
            long now = clock.millis();
            write(handle -> {
                handle.execute("DELETE FROM counters");
                handle.execute(ADD_TO_COUNTER, SINCE, now);
                return null;
            });
        }

        @Override
        public Optional<Instant> countingSince() {
            record InFile(Optional<Long> since, long rows) {
            }
            return withUnwritten(reader -> reader.jdbi().withHandle(handle -> new InFile(
                            handle.createQuery("SELECT value FROM counters WHERE name = ?").bind(0, SINCE)
                                    .mapTo(Long.class).findOne(),
                            handle.createQuery("SELECT count(*) FROM counters").mapTo(Long.class).one())),
                    inFile -> {
                        if (inFile.since().isEmpty() && inFile.rows() == 0) {
                            Unwritten first = !inFlight.isEmpty() ? inFlight : unwritten;
                            return first.isEmpty() ? Optional.<Long>empty() : Optional.of(first.firstAt);
                        }
                        return inFile.since();
                    }).map(Instant::ofEpochMilli);
        }
    }
}
