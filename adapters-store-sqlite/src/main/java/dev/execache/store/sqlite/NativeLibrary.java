package dev.execache.store.sqlite;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.net.URLConnection;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import java.util.UUID;
import org.sqlite.SQLiteJDBCLoader;
import org.sqlite.util.OSInfo;

/**
 * Where the SQLite driver loads its native library from: one copy per user and driver version,
 * in {@code $XDG_CACHE_HOME/execache/native/} (a directory only its owner can open), given to the
 * driver through its own properties ({@code org.sqlite.lib.path}, {@code org.sqlite.lib.name},
 * {@code org.sqlite.tmpdir}).
 *
 * <p>Left to itself, the driver extracts a copy named {@code sqlite-VERSION-UUID-...} into the
 * shared temporary directory on every start, and at start deletes every such copy whose lock file
 * is gone: when one process deletes the copy that another is deleting on its way out, the driver
 * prints {@code Failed to delete old native lib}, and concurrent first runs met it. Here the copy is
 * written once, under a temporary name and moved into place in one step, and the driver's clean-up
 * looks only in a directory that holds none of its own copies.
 */
final class NativeLibrary {
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");
    private static boolean prepared;

    private NativeLibrary() {
    }

    /**
     * Points the driver at the per-user copy, extracting it first if it is missing; does nothing
     * when the library was chosen by the driver's properties already, and leaves the driver to its
     * own way when the copy cannot be made (a read-only home, say).
     */
    static synchronized void prepare() {
        if (prepared) {
            return;
        }
        prepared = true;
        if (System.getProperty("org.sqlite.lib.path") != null || System.getProperty("org.sqlite.tmpdir") != null) {
            return;
        }
        Path cacheHome = SqliteCacheStore.defaultPath().getParent();
        prepare(cacheHome.resolve("native"));
    }

    static void prepare(Path nativeDirectory) {
        String name = System.mapLibraryName("sqlitejdbc");
        URL resource = SQLiteJDBCLoader.class.getResource(
                "/org/sqlite/native/" + OSInfo.getNativeLibFolderPathForCurrentOS() + "/" + name);
        if (resource == null) {
            return;
        }
        Path directory = nativeDirectory.resolve("sqlite-jdbc-" + SQLiteJDBCLoader.getVersion() + "-"
                + OSInfo.getNativeLibFolderPathForCurrentOS().replace('/', '-'));
        try {
            ownerOnly(nativeDirectory);
            ownerOnly(directory);
            Path library = directory.resolve(name);
            URLConnection connection = resource.openConnection();
            connection.setUseCaches(false);
            long size = connection.getContentLengthLong();
            if (!Files.isRegularFile(library, LinkOption.NOFOLLOW_LINKS) || Files.size(library) != size) {
                Path partial = directory.resolve(name + ".partial-" + UUID.randomUUID());
                try (InputStream in = connection.getInputStream()) {
                    Files.copy(in, partial);
                    moveIntoPlace(partial, library);
                } finally {
                    Files.deleteIfExists(partial);
                }
            }
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            return;
        }
        System.setProperty("org.sqlite.lib.path", directory.toString());
        System.setProperty("org.sqlite.lib.name", name);
        System.setProperty("org.sqlite.tmpdir", directory.toString());
    }

    /** Several processes may write the copy at once: each moves a whole one into place. */
    private static void moveIntoPlace(Path partial, Path library) throws IOException {
        try {
            Files.move(partial, library, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(partial, library, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /**
     * Creates the directory, or finds it, as a real directory that only its owner can open: a
     * library loaded from a directory another user can write would run their code.
     */
    private static void ownerOnly(Path directory) throws IOException {
        try {
            Files.createDirectories(directory.getParent());
            Files.createDirectory(directory, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
        } catch (FileAlreadyExistsException e) {
            if (!Files.isDirectory(directory, LinkOption.NOFOLLOW_LINKS)) {
                throw e;
            }
        }
        if (!Files.getPosixFilePermissions(directory, LinkOption.NOFOLLOW_LINKS).equals(OWNER_ONLY)) {
            Files.setPosixFilePermissions(directory, OWNER_ONLY);
        }
    }
}
