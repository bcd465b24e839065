package dev.execache.store.sqlite;

import dev.execache.core.Glob;
import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.CacheStore;
import dev.execache.core.spi.Counter;
import dev.execache.core.spi.GroupBound;
import dev.execache.core.spi.SessionRegistry;
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
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.HandleCallback;
import org.jdbi.v3.core.statement.PreparedBatch;
import org.jdbi.v3.core.statement.StatementContext;

/**
 * A {@link CacheStore} in one SQLite file that several processes may share: write-ahead
 * logging, a busy timeout and short {@code IMMEDIATE} transactions. A file that is not an
 * execache cache, or is from a newer execache, is refused and left as it was; one from an
 * older execache is migrated.
 *
 * <p>A hit only reads, on a connection of its own ({@link Readers}): under write-ahead logging it
 * waits neither for a write under way, nor for this store's writer, nor for another process's.
 * Writes go one at a time through one connection ({@link OpenFile}). The hit count and recency a
 * hit earns, the expired entries reads meet, and counter increments are kept in memory
 * ("unwritten") and written with this store's next write, or in the background once due
 * ({@link WriteBehind}); and at {@link #close}. Until then other processes see the previous
 * counts and recency; this one sees them added. The counters are {@link SqliteCounters}.
 */
public final class SqliteCacheStore implements CacheStore {
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

    private final OpenFile file;
    private final WriteBehind writeBehind;
    private final SqliteCounters counters;
    private final WriteGenerations writes = new Writes();
    private final SessionRegistry sessions = new Sessions();
    private final int maxEntries;
    private final Clock clock;
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
        this.file = new OpenFile(file, clock, openCheckSteps, this::forgetUnwritten);
        this.writeBehind = new WriteBehind(this.file, clock);
        this.counters = new SqliteCounters(this.file, writeBehind, clock);
    }

    /** What was noted for a file that is replaced goes with it. */
    private void forgetUnwritten() {
        writeBehind.forget();
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
        return file.path();
    }

    @Override
    public Optional<CacheEntry> get(String key) {
        long now = clock.millis();
        Optional<CacheEntry> hit = live(key, now, true);
        writeBehind.writeIfDue(now);
        return hit;
    }

    @Override
    public Optional<CacheEntry> peek(String key) {
        long now = clock.millis();
        Optional<CacheEntry> live = live(key, now, false);
        writeBehind.writeIfDue(now);
        return live;
    }

    /**
     * The entry under {@code key} unless it expired, with the hits not yet written added, and
     * this use counted when {@code use}. An expired one is noted, to be removed (and counted) by
     * the next write.
     */
    private Optional<CacheEntry> live(String key, long now, boolean use) {
        return writeBehind.withUnwritten("entries", reader -> stored(reader, key),
                stored -> stored.flatMap(entry -> writeBehind.met(entry, now, use)));
    }

    @Override
    public List<CacheEntry> entries() {
        long now = clock.millis();
        return writeBehind.withUnwritten("entries", reader -> reader.jdbi().withHandle(handle -> handle.createQuery(SELECT_LIVE_ENTRIES)
                        .bind(0, now)
                        .map(this::entry)
                        .list()),
                stored -> stored.stream().map(writeBehind::withUnwrittenHits).toList());
    }

    /** Also purges every expired entry, so that the file holds no dead results below the bound. */
    @Override
    public void put(CacheEntry entry) {
        put(entry, (GroupBound) null);
    }

    @Override
    public List<String> put(CacheEntry entry, GroupBound bound) {
        writeBehind.forgetUses(entry.key());
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
        writeBehind.forgetUses(key);
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
        return file.write(jdbi -> {
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
                if (matching.size() < keys.size()) {
                    throw e;
                }
                file.replaceWhenDiskFull(e);
                return matching.size();
            }
        });
    }

    /**
     * On a disk too full to commit the deletion, the file is removed and a new one started in
     * its place (said in one line): counters and last-seen versions then go too.
     */
    @Override
    public void clear() {
        file.write(jdbi -> {
            writeBehind.forgetUses();
            try {
                write(handle -> {
                    handle.execute("DELETE FROM entry_tools");
                    return handle.execute("DELETE FROM cache_entries");
                });
            } catch (RuntimeException e) {
                file.replaceWhenDiskFull(e);
            }
            return null;
        });
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
        return file.read("the estimated bytes", reader -> reader.jdbi().withHandle(handle -> handle.createQuery(
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

    @Override
    public SessionRegistry sessions() {
        return sessions;
    }

    private static final Duration SESSION_REWRITE = Duration.ofMinutes(1);

    /** In the file, so that every process on it knows them; expired rows go when a session is opened. */
    private final class Sessions implements SessionRegistry {
        @Override
        public void open(String id, String owner, Duration idleLimit) {
            long now = clock.millis();
            write(handle -> {
                handle.execute("DELETE FROM sessions WHERE expires_at <= ?", now);
                return handle.execute("INSERT OR REPLACE INTO sessions (id, owner, expires_at) VALUES (?, ?, ?)", id,
                        owner, now + idleLimit.toMillis());
            });
        }

        @Override
        public Optional<String> use(String id, Duration idleLimit) {
            long now = clock.millis();
            Optional<Map.Entry<String, Long>> open = file.read("a session", reader -> reader.jdbi().withHandle(handle ->
                    handle.createQuery("SELECT owner, expires_at FROM sessions WHERE id = ?").bind(0, id)
                            .map((row, context) -> Map.entry(row.getString(1), row.getLong(2))).findOne()));
            if (open.isEmpty() || open.get().getValue() <= now) {
                return Optional.empty();
            }
            // written again once a minute of it has passed, not on every request: each write takes the file's lock
            long expiresAt = now + idleLimit.toMillis();
            if (open.get().getValue() < expiresAt - SESSION_REWRITE.toMillis()) {
                write(handle -> handle.execute("UPDATE sessions SET expires_at = ? WHERE id = ?", expiresAt, id));
            }
            return Optional.of(open.get().getKey());
        }

        @Override
        public boolean end(String id) {
            long now = clock.millis();
            return write(handle -> handle.execute("DELETE FROM sessions WHERE id = ? AND expires_at > ?", id, now)) > 0;
        }
    }

    private static long generation(Handle handle, String server) {
        return handle.createQuery("SELECT generation FROM write_generations WHERE server = ?").bind(0, server)
                .mapTo(Long.class).findOne().orElse(0L);
    }

    /** In the file, so every process on it shares them; the check of a put on condition is in the put's transaction. */
    private final class Writes implements WriteGenerations {
        @Override
        public long current(String server) {
            return file.read("write generations", reader -> reader.jdbi().withHandle(handle -> generation(handle, server)));
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

    @Override
    public Map<String, String> lastSeenVersions(String scope) {
        Objects.requireNonNull(scope, "scope must not be null");
        return file.read("the last-seen tool versions", reader -> {
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
        writeBehind.close();
    }

    /** For tests: a write has taken what was unwritten and not yet committed it. */
    boolean writeUnderWay() {
        return writeBehind.writeUnderWay();
    }

    /** A write transaction, which writes what is unwritten first. */
    private <R> R write(HandleCallback<R, RuntimeException> work) {
        return writeBehind.write(work);
    }

    /** What the file holds under {@code key}, expired or not; the statement ends (its read too) before this returns. */
    private Optional<CacheEntry> stored(Readers.Reader reader, String key) throws SQLException {
        PreparedStatement select = reader.select(SELECT_ENTRY);
        select.setString(1, key);
        try (ResultSet row = select.executeQuery()) {
            return row.next() ? Optional.of(entry(row, null)) : Optional.empty();
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
        SqliteCounters.add(handle, Counter.EVICTIONS, eldest.size());
        return eldest;
    }

    private void evictLeastRecentlyUsed(Handle handle) {
        int excess = handle.createQuery("SELECT count(*) FROM cache_entries").mapTo(Integer.class).one() - maxEntries;
        if (excess > 0) {
            int evicted = handle.execute("""
                    DELETE FROM cache_entries
                     WHERE rowid IN (SELECT rowid FROM cache_entries ORDER BY last_access LIMIT ?)""", excess);
            SqliteCounters.add(handle, Counter.EVICTIONS, evicted);
        }
    }

    private static int deleteExpired(Handle handle, long now) {
        int expired = handle.execute("DELETE FROM cache_entries WHERE expires_at <= ?", now);
        SqliteCounters.add(handle, Counter.EXPIRATIONS, expired);
        return expired;
    }
}
