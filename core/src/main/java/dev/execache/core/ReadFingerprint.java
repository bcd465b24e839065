package dev.execache.core;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;

/**
 * What the files code may read look like now: each file's path, size and modification time
 * under every allowed path. Part of the key, so a result that read a file is not reused once
 * the file changed.
 */
final class ReadFingerprint {
    /** Past this many files the paths are too broad to watch: such a run is not cached. */
    static final int MAX_FILES = 10_000;

    private ReadFingerprint() {
    }

    /** The fingerprint, or empty when the paths hold more than {@link #MAX_FILES} files. */
    static Optional<String> of(List<String> allowRead) {
        TreeMap<String, String> files = new TreeMap<>();
        for (String allowed : allowRead) {
            Path root = Path.of(allowed).toAbsolutePath().normalize();
            if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
                files.put(root.toString(), "missing");
                continue;
            }
            try {
                Files.walkFileTree(root, new SimpleFileVisitor<>() {
                    @Override
                    public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) {
                        files.put(file.toString(), attributes.size() + "@" + attributes.lastModifiedTime().toMillis());
                        return files.size() > MAX_FILES ? FileVisitResult.TERMINATE : FileVisitResult.CONTINUE;
                    }

                    @Override
                    public FileVisitResult visitFileFailed(Path file, IOException e) {
                        files.put(file.toString(), "unreadable");
                        return FileVisitResult.CONTINUE;
                    }
                });
            } catch (IOException e) {
                files.put(root.toString(), "unreadable");
            }
            if (files.size() > MAX_FILES) {
                return Optional.empty();
            }
        }
        return Optional.of(CacheKeys.sha256(CanonicalJson.write(files, "allowRead")));
    }
}
