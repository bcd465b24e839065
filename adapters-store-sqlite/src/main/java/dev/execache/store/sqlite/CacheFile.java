package dev.execache.store.sqlite;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Arrays;

/**
 * The checks made on a cache file before SQLite is let near it, so that a wrong path is
 * refused with a message naming it and the file is left exactly as it was.
 */
final class CacheFile {
    private static final byte[] SQLITE_HEADER = "SQLite format 3\0".getBytes(StandardCharsets.US_ASCII);
    /** Where SQLite's header keeps {@code PRAGMA application_id}, big-endian. */
    private static final int APPLICATION_ID_OFFSET = 68;
    /** Where SQLite's header keeps {@code PRAGMA user_version}, big-endian. */
    private static final int USER_VERSION_OFFSET = 60;
    /** Where SQLite's header keeps the file format's write and read versions: 2 for WAL. */
    private static final int WRITE_VERSION_OFFSET = 18;
    private static final byte WAL = 2;

    private CacheFile() {
    }

    /**
     * Returns the absolute path of a file that is absent, empty or a SQLite database, in a
     * directory we may write to (created if missing).
     */
    static Path prepare(Path file) {
        Path path = file.toAbsolutePath().normalize();
        if (path.toString().indexOf('?') >= 0) {
            throw new IllegalArgumentException("SQLite cache path must not contain '?': " + path);
        }
        if (Files.isDirectory(path)) {
            throw new IllegalArgumentException("SQLite cache path is a directory, not a file: " + path);
        }
        Path directory = path.getParent();
        try {
            Files.createDirectories(directory);
        } catch (IOException | SecurityException e) {
            throw new IllegalStateException("cannot create the directory of SQLite cache " + path + ": " + e, e);
        }
        if (!Files.isWritable(directory)) {
            throw new IllegalStateException("cannot write in the directory of SQLite cache " + path);
        }
        if (Files.exists(path)) {
            requireSqliteFile(path);
        }
        return path;
    }

    /**
     * Whether the file's header names it an execache cache ({@code PRAGMA application_id}, read
     * from the bytes, as a damaged file cannot be asked through SQLite): only such a file is
     * ever moved aside; any other is refused and left as it is.
     */
    static boolean isMarkedAsCache(Path path) {
        byte[] header = header(path);
        return header.length == APPLICATION_ID_OFFSET + 4
                && Arrays.equals(header, 0, SQLITE_HEADER.length, SQLITE_HEADER, 0, SQLITE_HEADER.length)
                && ByteBuffer.wrap(header, APPLICATION_ID_OFFSET, 4).getInt() == Schema.APPLICATION_ID;
    }

    /**
     * Whether the header says the file is a cache of the current schema version in write-ahead
     * log mode, which opening leaves as it is; any other (an older version to migrate, a journal
     * mode to switch) is written into when opened.
     */
    static boolean opensWithoutWriting(Path path) {
        byte[] header = header(path);
        return isMarkedAsCache(path)
                && header[WRITE_VERSION_OFFSET] == WAL && header[WRITE_VERSION_OFFSET + 1] == WAL
                && ByteBuffer.wrap(header, USER_VERSION_OFFSET, 4).getInt() == Schema.VERSION;
    }

    private static byte[] header(Path path) {
        try (InputStream in = Files.newInputStream(path)) {
            return in.readNBytes(APPLICATION_ID_OFFSET + 4);
        } catch (IOException e) {
            return new byte[0];
        }
    }

    /**
     * Moves a damaged cache aside, with its write-ahead log, to {@code NAME.damaged-TIME} in its
     * directory (the shared-memory index is only a cache of the log, and is deleted), so that a
     * new file takes its place and nothing more is written into it.
     *
     * @return where it went
     */
    static Path moveAside(Path path, Instant now) {
        Path aside = path.resolveSibling(path.getFileName() + ".damaged-"
                + DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss.SSS'Z'").withZone(ZoneOffset.UTC).format(now));
        try {
            Files.move(path, aside);
            Path log = path.resolveSibling(path.getFileName() + "-wal");
            if (Files.exists(log)) {
                Files.move(log, aside.resolveSibling(aside.getFileName() + "-wal"));
            }
            Files.deleteIfExists(path.resolveSibling(path.getFileName() + "-shm"));
        } catch (IOException e) {
            throw new IllegalStateException("SQLite cache " + path + " is damaged and cannot be moved aside: " + e, e);
        }
        return aside;
    }

    /** Removes the cache and its write-ahead log and shared-memory index: it is only a cache. */
    static void remove(Path path) {
        try {
            for (String suffix : new String[] {"", "-wal", "-shm"}) {
                Files.deleteIfExists(path.resolveSibling(path.getFileName() + suffix));
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot remove SQLite cache " + path + ": " + e, e);
        }
    }

    private static void requireSqliteFile(Path path) {
        if (!Files.isRegularFile(path)) {
            throw new IllegalArgumentException("SQLite cache path is not a regular file: " + path);
        }
        if (!Files.isReadable(path) || !Files.isWritable(path)) {
            throw new IllegalStateException("cannot read and write SQLite cache " + path);
        }
        byte[] header;
        try (InputStream in = Files.newInputStream(path)) {
            header = in.readNBytes(SQLITE_HEADER.length);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read SQLite cache " + path + ": " + e, e);
        }
        if (header.length > 0 && !Arrays.equals(header, SQLITE_HEADER)) {
            throw new IllegalArgumentException(
                    "not a SQLite database, refusing to use it as a cache (left unchanged): " + path);
        }
    }
}
