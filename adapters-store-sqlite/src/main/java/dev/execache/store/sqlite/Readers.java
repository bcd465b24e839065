package dev.execache.store.sqlite;

import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedDeque;
import org.jdbi.v3.core.Jdbi;

/**
 * The connections a store reads through, apart from the one it writes through: under
 * write-ahead logging a read sees the last commit and waits neither for a write under way nor
 * for the writer's lock, so a hit never queues behind a put or the write-behind flush. Opened
 * as needed, one per thread reading at once, and up to {@value #KEPT} kept between reads.
 */
final class Readers implements AutoCloseable {
    private static final int KEPT = 4;

    private final Path file;
    private final Deque<Reader> idle = new ConcurrentLinkedDeque<>();
    /** Advanced when the file is replaced, so that no reader of the old one is used again. */
    private volatile int generation;
    private volatile boolean closed;

    Readers(Path file) {
        this.file = file;
    }

    /** What a read does with its reader; may throw what the connection throws. */
    interface Read<R> {
        R apply(Reader reader) throws SQLException;
    }

    /**
     * Runs {@code read} on a reader of the current file; a reader whose read failed is closed
     * (its kept selects with it) rather than kept.
     */
    <R> R read(Read<R> read) throws SQLException {
        Reader reader = borrow();
        boolean kept = false;
        try {
            R result = read.apply(reader);
            kept = true;
            return result;
        } finally {
            if (kept) {
                giveBack(reader);
            } else {
                reader.close();
            }
        }
    }

    private Reader borrow() {
        if (closed) {
            throw new IllegalStateException("SQLite cache " + file + " is closed");
        }
        for (Reader reader = idle.pollFirst(); reader != null; reader = idle.pollFirst()) {
            if (reader.generation == generation) {
                return reader;
            }
            reader.close();
        }
        return new Reader(SingleConnection.openReader(file), generation);
    }

    private void giveBack(Reader reader) {
        if (closed || reader.generation != generation || idle.size() >= KEPT) {
            reader.close();
            return;
        }
        idle.offerFirst(reader);
        if (closed) {
            closeIdle();
        }
    }

    /** The file was replaced by a new one: readers of the old one are closed as they come back. */
    void fileReplaced() {
        generation++;
        closeIdle();
    }

    @Override
    public void close() {
        closed = true;
        closeIdle();
    }

    private void closeIdle() {
        for (Reader reader = idle.pollFirst(); reader != null; reader = idle.pollFirst()) {
            reader.close();
        }
    }

    /**
     * One connection that only reads, used by one thread at a time, with the selects every run
     * makes (the hit's, the last-seen versions') kept prepared on it by their SQL: through a Jdbi
     * query a hit prepared its select again, and made a handle, a statement context and a copy
     * of the configuration, on every call: about a third of a hit.
     */
    static final class Reader {
        private final SingleConnection connection;
        private final int generation;
        private final Map<String, PreparedStatement> kept = new HashMap<>();
        private Jdbi jdbi;

        private Reader(SingleConnection connection, int generation) {
            this.connection = connection;
            this.generation = generation;
        }

        PreparedStatement select(String sql) throws SQLException {
            PreparedStatement select = kept.get(sql);
            if (select == null) {
                select = connection.openConnection().prepareStatement(sql);
                kept.put(sql, select);
            }
            return select;
        }

        /** For the rare reads (figures, listings), where a handle's cost does not matter. */
        Jdbi jdbi() {
            if (jdbi == null) {
                jdbi = connection.jdbi();
            }
            return jdbi;
        }

        private void close() {
            for (PreparedStatement select : kept.values()) {
                try {
                    select.close();
                } catch (SQLException e) {
                    // the connection goes next, and its statements with it
                }
            }
            kept.clear();
            try {
                connection.close();
            } catch (RuntimeException e) {
                // nothing more can be done with a reader that is let go
            }
        }
    }
}
