package dev.execache.sandbox;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Read access as the user meant it, whatever links lie in the way. Deno checks the path the
 * code names, not where it leads, so a symbolic link inside an allowed tree would let the code
 * read its target. Hence: the allowed paths reach Deno as real paths (links resolved), and a
 * run whose allowed trees hold a link that leads out of them (or into /proc) is refused before
 * anything starts. A link that stays inside is fine: every path the code can name then ends
 * inside the trees (Deno removes {@code ..} before it opens a path, so no path climbs out
 * through a link either). The code itself cannot make links (no write permission); a link
 * that another program makes while a run is in progress is not seen, nor is a hard link,
 * which is the file itself to every check.
 */
final class ReadAccess {
    /** Past this many entries the trees are too broad to check on every run. */
    static final int MAX_ENTRIES = 100_000;
    static final Path PROC = Path.of("/proc");

    private ReadAccess() {
    }

    /**
     * The allowed paths with every link resolved; a path that does not exist stays as given
     * (absolute, normalized).
     *
     * @throws IllegalArgumentException when a path lies in /proc
     */
    static List<Path> realRoots(List<String> allowRead) {
        List<Path> roots = new ArrayList<>();
        for (String allowed : allowRead) {
            Path path = Path.of(allowed).toAbsolutePath().normalize();
            Path real = path;
            try {
                real = path.toRealPath();
            } catch (IOException e) {
                // missing or unreadable: Deno finds nothing there either
            }
            if (real.startsWith(PROC)) {
                throw new IllegalArgumentException("allowRead: " + allowed + " lies in /proc, which cannot be allowed:"
                        + " it holds the memory of the sandbox's own processes");
            }
            roots.add(real);
        }
        return roots;
    }

    /** Why the run must not start, or empty when no link in the allowed trees leads out of them. */
    static Optional<String> refusal(List<String> realRoots) {
        List<Path> roots = realRoots.stream().map(Path::of).toList();
        int[] entries = {0};
        String[] found = {null};
        for (Path root : roots) {
            if (!Files.isDirectory(root, LinkOption.NOFOLLOW_LINKS)) {
                continue;
            }
            try {
                Files.walkFileTree(root, new SimpleFileVisitor<>() {
                    @Override
                    public FileVisitResult preVisitDirectory(Path directory, BasicFileAttributes attributes) {
                        return ++entries[0] > MAX_ENTRIES ? FileVisitResult.TERMINATE : FileVisitResult.CONTINUE;
                    }

                    @Override
                    public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) {
                        if (++entries[0] > MAX_ENTRIES) {
                            return FileVisitResult.TERMINATE;
                        }
                        if (attributes.isSymbolicLink()) {
                            Path target = target(file);
                            if (!inside(target, roots)) {
                                found[0] = file + " is a symbolic link that leads out of the paths allowed to read (to "
                                        + target + "); remove it or allow its target too";
                                return FileVisitResult.TERMINATE;
                            }
                        }
                        return FileVisitResult.CONTINUE;
                    }

                    @Override
                    public FileVisitResult visitFileFailed(Path file, IOException e) {
                        // a directory this user cannot list: Deno cannot read in it either
                        return FileVisitResult.CONTINUE;
                    }
                });
            } catch (IOException e) {
                // the visitor handles every failure itself
            }
            if (found[0] != null) {
                return Optional.of(found[0]);
            }
            if (entries[0] > MAX_ENTRIES) {
                return Optional.of("the paths allowed to read hold more than " + MAX_ENTRIES
                        + " entries, too many to check for symbolic links that lead out of them; allow narrower paths");
            }
        }
        return Optional.empty();
    }

    /**
     * The real path of the working directory when the code may read it (it lies in an allowed
     * tree); otherwise empty, and the code is not told where it is.
     */
    static Optional<String> readableWorkingDirectory(String workingDirectory, List<String> realRoots) {
        if (workingDirectory.isEmpty()) {
            return Optional.empty();
        }
        Path real;
        try {
            real = Path.of(workingDirectory).toRealPath();
        } catch (IOException e) {
            return Optional.empty();
        }
        for (String root : realRoots) {
            if (real.startsWith(root) && !real.startsWith(PROC)) {
                return Optional.of(real.toString());
            }
        }
        return Optional.empty();
    }

    /** Where a link leads: its real path, or for a dangling link the path it names. */
    private static Path target(Path link) {
        try {
            return link.toRealPath();
        } catch (NoSuchFileException e) {
            // dangling: judged by the path it names, which something could create later
        } catch (IOException e) {
            // a loop or an unreadable step: judged the same way
        }
        try {
            return link.getParent().resolve(Files.readSymbolicLink(link)).normalize();
        } catch (IOException e) {
            return link;
        }
    }

    private static boolean inside(Path target, List<Path> roots) {
        if (target.startsWith(PROC)) {
            return false;
        }
        for (Path root : roots) {
            if (target.startsWith(root)) {
                return true;
            }
        }
        return false;
    }
}
