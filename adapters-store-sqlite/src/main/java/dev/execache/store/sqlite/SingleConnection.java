package dev.execache.store.sqlite;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import org.jdbi.v3.core.ConnectionFactory;
import org.sqlite.SQLiteConfig;

/**
 * One SQLite connection kept open for the life of a store and lent to one Jdbi handle at a
 * time (the store serialises its callers). Opening a SQLite connection per handle, as
 * {@code Jdbi.create(url)} does, costs several times a primary-key read.
 */
final class SingleConnection implements ConnectionFactory, AutoCloseable {
    static final int BUSY_TIMEOUT_MILLIS = 10_000;
    private static final int SQLITE_CORRUPT = 11;
    private static final int SQLITE_NOTADB = 26;

    private final Path file;
    private final Connection connection;
    private volatile boolean closed;

    private SingleConnection(Path file, Connection connection) {
        this.file = file;
        this.connection = connection;
    }

    /**
     * Opens without writing anything: WAL is switched on by {@link Schema} once the file is
     * known to be ours. Transactions begin {@code IMMEDIATE}, so that a transaction that reads
     * before it writes waits for other processes' writers instead of failing.
     */
    static SingleConnection open(Path file) {
        NativeLibrary.prepare();
        SQLiteConfig config = new SQLiteConfig();
        config.setBusyTimeout(BUSY_TIMEOUT_MILLIS);
        config.enforceForeignKeys(true);
        config.setSynchronous(SQLiteConfig.SynchronousMode.NORMAL);
        config.setTransactionMode(SQLiteConfig.TransactionMode.IMMEDIATE);
        try {
            return new SingleConnection(file, config.createConnection("jdbc:sqlite:" + file));
        } catch (SQLException e) {
            if (e.getErrorCode() == SQLITE_CORRUPT || e.getErrorCode() == SQLITE_NOTADB) {
                throw new IllegalArgumentException("SQLite cache " + file + " is damaged or not a SQLite database,"
                        + " refusing to use it (the file is left unchanged): " + e.getMessage(), e);
            }
            throw new IllegalStateException("cannot open SQLite cache " + file + ": " + e.getMessage(), e);
        }
    }

    @Override
    public Connection openConnection() {
        if (closed) {
            throw new IllegalStateException("SQLite cache " + file + " is closed");
        }
        return connection;
    }

    @Override
    public void closeConnection(Connection lent) {
    }

    @Override
    public void close() {
        closed = true;
        try {
            connection.close();
        } catch (SQLException e) {
            throw new IllegalStateException("cannot close SQLite cache " + file + ": " + e.getMessage(), e);
        }
    }
}
