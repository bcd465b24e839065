package dev.execache.store.sqlite;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * The checks made on a cache file before SQLite is let near it, so that a wrong path is
 * refused with a message naming it and the file is left exactly as it was.
 */
final class CacheFile {
    private static final byte[] SQLITE_HEADER = "SQLite format 3\0".getBytes(StandardCharsets.US_ASCII);

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
