package dev.execache.store.sqlite;

import dev.execache.store.sqlite.Schema.StructureCheck;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Clock;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import org.jdbi.v3.core.Jdbi;
import org.sqlite.SQLiteErrorCode;
import org.sqlite.SQLiteException;

/**
 * The cache file while a store has it open: checked at open (a damaged cache moved aside and a
 * new file started in its place), made a current cache ({@link Schema}: migrations, write-ahead
 * logging), written through one connection one write at a time, read through {@link Readers},
 * replaced when the disk is too full to empty it, and closed.
 */
final class OpenFile {
    private static final System.Logger LOG = System.getLogger(SqliteCacheStore.class.getName());

    private final Path file;
    private final Clock clock;
    private final long openCheckSteps;
    /** What the store kept for the file, forgotten when the file is replaced. */
    private final Runnable forgetPending;
    private final Readers readers;
    /** Held by every write, one at a time; guards {@link #connection}, {@link #jdbi}, {@link #unchecked} and {@link #closed}. */
    private final ReentrantLock writer = new ReentrantLock();
    /**
     * Set when the check of the file's structure at open stopped at its bound: the file may be
     * damaged, so the check runs to its end before anything is written into it.
     */
    private boolean unchecked;
    /** Replaced, with {@link #jdbi}, only when the file is. */
    private SingleConnection connection;
    private Jdbi jdbi;
    private volatile boolean closed;

    /**
     * Opens, or creates with its parent directories (owner-only), the cache at {@code file}.
     *
     * @param openCheckSteps how many of its own steps the check of the structure may take now
     * @param forgetPending forgets what was noted for the file and not written, when it is replaced
     */
    OpenFile(Path file, Clock clock, long openCheckSteps, Runnable forgetPending) {
        this.clock = clock;
        this.openCheckSteps = openCheckSteps;
        this.forgetPending = forgetPending;
        this.file = CacheFile.prepare(file);
        attach(openIntact());
        this.readers = new Readers(this.file);
    }

    Path path() {
        return file;
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
        forgetPending.run();
        connection.close();
        attach(replaceDamaged(damage.get()));
        readers.fileReplaced();
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

    /** A read of the file on a reader of its own; a failure names what was read. */
    <R> R read(String what, Readers.Read<R> read) {
        try {
            return readers.read(read);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot read " + what + " from SQLite cache " + file + ": " + e.getMessage(), e);
        }
    }

    /**
     * Runs {@code work} on the writer, holding it (writes go one at a time; a write may hold it
     * again): the check of a file too large to check whole at open runs to its end first.
     *
     * @throws IllegalStateException if the file is closed
     */
    <R> R write(Function<Jdbi, R> work) {
        writer.lock();
        try {
            if (closed) {
                throw new IllegalStateException("SQLite cache " + file + " is closed");
            }
            if (unchecked) {
                finishCheck();
            }
            return work.apply(jdbi);
        } finally {
            writer.unlock();
        }
    }

    /** Runs {@code work} holding the writer unless the file is closed; then it does nothing. */
    void writeIfOpen(Runnable work) {
        writer.lock();
        try {
            if (!closed) {
                work.run();
            }
        } finally {
            writer.unlock();
        }
    }

    /**
     * When {@code cannotCommit} says the disk is full, removes the file and starts a new, empty
     * one in its place: it is only a cache, and a full disk must be freeable through execache. Its
     * counters and last-seen tool versions go with it; said in one line. Else throws {@code cannotCommit}.
     */
    void replaceWhenDiskFull(RuntimeException cannotCommit) {
        if (!isDiskFull(cannotCommit)) {
            throw cannotCommit;
        }
        writer.lock();
        try {
            replace(cannotCommit);
        } finally {
            writer.unlock();
        }
    }

    private void replace(RuntimeException cannotCommit) {
        unchecked = false;
        forgetPending.run();
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

    /** Runs {@code last} holding the writer, then closes the file; closing twice does nothing. */
    void close(Runnable last) {
        writer.lock();
        try {
            if (closed) {
                return;
            }
            try {
                last.run();
            } finally {
                closed = true;
                readers.close();
                connection.close();
            }
        } finally {
            writer.unlock();
        }
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
}
