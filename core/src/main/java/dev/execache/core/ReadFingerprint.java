package dev.execache.core;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * What the files code may read look like now: under every allowed path, each file's path, size
 * and modification time, and each symbolic link's target, with links followed to what they lead
 * to (the code reads through them too). Part of the key, so a result that read a file is not
 * reused once the file changed.
 *
 * <p>A scan that cannot finish gives no fingerprint, never a partial one (the run is then not
 * cached): more than {@link #MAX_FILES} files, a directory that cannot be listed, or something
 * whose content changes without its size or time saying so (a device, a pipe, a socket, or
 * anything under /proc, /sys or /dev).
 */
final class ReadFingerprint {
    /** Past this many files the paths are too broad to watch: such a run is not cached. */
    static final int MAX_FILES = 10_000;
    /** Why a run whose paths give no fingerprint is not cached, for logs and errors. */
    static final String NOT_WATCHABLE = "the paths the code may read cannot all be watched for changes (more than "
            + MAX_FILES + " files, a directory that cannot be listed, or a device or /proc-like file)";
    private static final List<Path> VOLATILE = List.of(Path.of("/proc"), Path.of("/sys"), Path.of("/dev"));

    private final TreeMap<String, String> seen = new TreeMap<>();
    private final Set<Object> openDirectories = new HashSet<>();
    private int files;

    private ReadFingerprint() {
    }

    static Optional<String> of(List<String> allowRead) {
        return of(allowRead, "");
    }

    /**
     * The fingerprint, or empty when the scan cannot finish (see the class comment).
     *
     * @param workingDirectory where relative paths in the code resolve: the same relative path
     *     reads another file from another directory
     */
    static Optional<String> of(List<String> allowRead, String workingDirectory) {
        ReadFingerprint scan = new ReadFingerprint();
        if (!workingDirectory.isEmpty()) {
            scan.seen.put("", "working directory " + workingDirectory);
        }
        try {
            for (String allowed : allowRead) {
                scan.visit(Path.of(allowed).toAbsolutePath().normalize(), null);
            }
        } catch (Unwatchable | IOException e) {
            return Optional.empty();
        }
        return Optional.of(CacheKeys.sha256(CanonicalJson.write(scan.seen, "allowRead")));
    }

    /** @param realParent the real path of the directory holding it, or null for an allowed path */
    private void visit(Path path, Path realParent) throws IOException, Unwatchable {
        BasicFileAttributes own;
        try {
            own = Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            seen.put(path.toString(), "missing");
            return;
        }
        BasicFileAttributes attributes = own;
        Path real;
        if (own.isSymbolicLink() || realParent == null) {
            if (own.isSymbolicLink()) {
                seen.put(path.toString(), "link to " + Files.readSymbolicLink(path));
            }
            try {
                real = path.toRealPath();
                attributes = Files.readAttributes(real, BasicFileAttributes.class);
            } catch (NoSuchFileException e) {
                return;
            }
        } else {
            real = realParent.resolve(path.getFileName());
        }
        if (isVolatile(real)) {
            throw new Unwatchable();
        }
        if (attributes.isRegularFile()) {
            if (++files > MAX_FILES) {
                throw new Unwatchable();
            }
            seen.merge(path.toString(), attributes.size() + "@" + attributes.lastModifiedTime().toMillis(),
                    (link, file) -> link + ": " + file);
        } else if (attributes.isDirectory()) {
            visitDirectory(path, real, attributes);
        } else {
            throw new Unwatchable();
        }
    }

    private void visitDirectory(Path path, Path real, BasicFileAttributes attributes)
            throws IOException, Unwatchable {
        Object key = attributes.fileKey() != null ? attributes.fileKey() : real.toString();
        if (!openDirectories.add(key)) {
            // a link back to a directory the walk is in: everything under it is seen already
            seen.put(path.toString(), "loop");
            return;
        }
        try {
            List<Path> entries = new ArrayList<>();
            try (DirectoryStream<Path> listing = Files.newDirectoryStream(path)) {
                for (Path entry : listing) {
                    entries.add(entry);
                }
            }
            for (Path entry : entries) {
                visit(entry, real);
            }
        } finally {
            openDirectories.remove(key);
        }
    }

    /** Content that changes without its size or time saying so; the root holds such places. */
    private static boolean isVolatile(Path real) {
        return real.getParent() == null || VOLATILE.stream().anyMatch(real::startsWith);
    }

    /** The scan cannot finish: no fingerprint at all. */
    private static final class Unwatchable extends Exception {
        Unwatchable() {
            super(null, null, false, false);
        }
    }
}
