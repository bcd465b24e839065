package dev.execache.store.sqlite;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import org.jdbi.v3.core.ConnectionFactory;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.statement.SqlStatements;
import org.jdbi.v3.core.statement.TemplateEngine;
import org.jdbi.v3.sqlite3.SQLitePlugin;
import org.sqlite.SQLiteConfig;

/**
 * One SQLite connection kept open for the life of a store (its writer) or of a reader in
 * {@link Readers}, and lent to one Jdbi handle at a time (one thread uses it at a time).
 * Opening a SQLite connection per handle, as {@code Jdbi.create(url)} does, costs several times
 * a primary-key read.
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
        SQLiteConfig config = new SQLiteConfig();
        config.setTransactionMode(SQLiteConfig.TransactionMode.IMMEDIATE);
        return open(file, config);
    }

    /**
     * Opens a connection that only reads ({@code query_only}): under write-ahead logging its
     * reads see the last commit and never wait for a writer, of this process or another.
     */
    static SingleConnection openReader(Path file) {
        SQLiteConfig config = new SQLiteConfig();
        config.setTransactionMode(SQLiteConfig.TransactionMode.DEFERRED);
        SingleConnection reader = open(file, config);
        try (Statement statement = reader.connection.createStatement()) {
            statement.execute("PRAGMA query_only = 1");
        } catch (SQLException e) {
            reader.close();
            throw new IllegalStateException("cannot open SQLite cache " + file + " for reading: " + e.getMessage(), e);
        }
        return reader;
    }

    private static SingleConnection open(Path file, SQLiteConfig config) {
        NativeLibrary.prepare();
        config.setBusyTimeout(BUSY_TIMEOUT_MILLIS);
        config.enforceForeignKeys(true);
        config.setSynchronous(SQLiteConfig.SynchronousMode.NORMAL);
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

    /** A Jdbi lending this connection to its handles. */
    Jdbi jdbi() {
        Jdbi jdbi = Jdbi.create(this).installPlugin(new SQLitePlugin());
        jdbi.getConfig(SqlStatements.class).setTemplateEngine(TemplateEngine.NOP);
        return jdbi;
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
