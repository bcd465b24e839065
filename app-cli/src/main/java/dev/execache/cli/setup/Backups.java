package dev.execache.cli.setup;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.cli.settings.ParseErrors;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Every file setup changes is copied here first, with what it wrote, so that {@code --undo} puts
 * each back byte for byte. One numbered set per {@code --apply}; undo takes the latest. The copies
 * hold the secrets the files held: the directory is its owner's only.
 */
final class Backups {
    private static final JsonMapper JSON = new JsonMapper();
    private static final String MANIFEST = "manifest.json";

    private final Path root;

    Backups(Path root) {
        this.root = root;
    }

    /** A file's new content, and the permissions it gets (null: those it has, or owner-only for a new file). */
    record Change(Path path, byte[] bytes, Set<PosixFilePermission> permissions) {
    }

    /** One file of a backup set, and what undo does with it. */
    record Entry(Path path, boolean existed, Path backup, Set<PosixFilePermission> permissions, String written) {
    }

    Path root() {
        return root;
    }

    /** Backs every file up, then writes each; a failure puts back what was already written, and is thrown. */
    Path apply(List<Change> changes) throws IOException {
        Path set = nextSet();
        List<Entry> entries = new ArrayList<>();
        List<Path> createdDirectories = new ArrayList<>();
        try {
            Files.createDirectories(set.resolve("files"));
            for (int i = 0; i < changes.size(); i++) {
                Change change = changes.get(i);
                boolean existed = Files.exists(change.path());
                Path backup = set.resolve("files").resolve(Integer.toString(i));
                Set<PosixFilePermission> permissions = null;
                if (existed) {
                    permissions = SafeFiles.permissions(change.path());
                    SafeFiles.write(backup, Files.readAllBytes(change.path()), SafeFiles.OWNER_ONLY);
                }
                entries.add(new Entry(change.path(), existed, existed ? backup : null, permissions,
                        SafeFiles.sha256(change.bytes())));
            }
            for (Change change : changes) {
                createdDirectories.addAll(createDirectories(change.path().getParent()));
            }
            writeManifest(set, entries, createdDirectories);
        } catch (IOException | RuntimeException e) {
            deleteTree(set);
            throw e;
        }
        int written = 0;
        try {
            for (Change change : changes) {
                Entry entry = entries.get(written);
                Set<PosixFilePermission> permissions = change.permissions() != null ? change.permissions()
                        : entry.existed() ? entry.permissions() : SafeFiles.OWNER_ONLY;
                SafeFiles.write(change.path(), change.bytes(), permissions);
                written++;
            }
        } catch (IOException | RuntimeException e) {
            for (int i = 0; i < written; i++) {
                restore(entries.get(i));
            }
            removeDirectories(createdDirectories);
            deleteTree(set);
            throw e;
        }
        return set;
    }

    /** The latest set, or null when there is none. */
    Path latest() throws IOException {
        if (!Files.isDirectory(root)) {
            return null;
        }
        try (Stream<Path> sets = Files.list(root)) {
            return sets.filter(set -> set.getFileName().toString().matches("\\d+") && Files.isRegularFile(set.resolve(MANIFEST)))
                    .max(Comparator.comparingInt(set -> Integer.parseInt(set.getFileName().toString())))
                    .orElse(null);
        }
    }

    List<Entry> entries(Path set) throws IOException {
        JsonNode manifest = manifest(set);
        List<Entry> entries = new ArrayList<>();
        for (JsonNode file : manifest.path("files")) {
            entries.add(new Entry(Path.of(file.path("path").asText()), file.path("existed").asBoolean(),
                    file.hasNonNull("backup") ? set.resolve(file.path("backup").asText()) : null,
                    file.hasNonNull("permissions") ? PosixFilePermissions.fromString(file.path("permissions").asText()) : null,
                    file.path("written").asText()));
        }
        return entries;
    }

    /** A set's manifest; one damaged by hand is named like any file that does not parse (never its text). */
    private static JsonNode manifest(Path set) throws IOException {
        Path file = set.resolve(MANIFEST);
        String text = Files.readString(file);
        try {
            return JSON.readTree(text);
        } catch (JacksonException e) {
            throw new SetupException(ParseErrors.describe(file, "JSON", text, e));
        }
    }

    /** The files that changed since setup wrote them (undo would lose those changes). */
    List<Path> changedSince(List<Entry> entries) throws IOException {
        List<Path> changed = new ArrayList<>();
        for (Entry entry : entries) {
            byte[] now;
            try {
                now = Files.readAllBytes(entry.path());
            } catch (NoSuchFileException e) {
                // a file setup created and someone removed since: nothing to lose
                if (entry.existed()) {
                    changed.add(entry.path());
                }
                continue;
            }
            if (!SafeFiles.sha256(now).equals(entry.written())) {
                changed.add(entry.path());
            }
        }
        return changed;
    }

    /** Puts every file of the set back as it was, removes what setup created, then the set itself. */
    void undo(Path set) throws IOException {
        for (Entry entry : entries(set)) {
            restore(entry);
        }
        List<Path> directories = new ArrayList<>();
        for (JsonNode directory : manifest(set).path("directories")) {
            directories.add(Path.of(directory.asText()));
        }
        removeDirectories(directories);
        deleteTree(set);
    }

    private static void restore(Entry entry) throws IOException {
        if (entry.existed()) {
            SafeFiles.write(entry.path(), Files.readAllBytes(entry.backup()), entry.permissions());
        } else {
            Files.deleteIfExists(entry.path());
        }
    }

    private Path nextSet() throws IOException {
        Files.createDirectories(root);
        if (SafeFiles.posix(root)) {
            Files.setPosixFilePermissions(root, SafeFiles.OWNER_ONLY_DIRECTORY);
        }
        int next = 1;
        try (Stream<Path> sets = Files.list(root)) {
            for (Path set : (Iterable<Path>) sets::iterator) {
                String name = set.getFileName().toString();
                if (name.matches("\\d+")) {
                    next = Math.max(next, Integer.parseInt(name) + 1);
                }
            }
        }
        Path set = root.resolve(String.format("%04d", next));
        Files.createDirectory(set);
        if (SafeFiles.posix(set)) {
            Files.setPosixFilePermissions(set, SafeFiles.OWNER_ONLY_DIRECTORY);
        }
        return set;
    }

    /** Creates a directory and its missing parents, owner-only; returns those it created, outermost first. */
    private static List<Path> createDirectories(Path directory) throws IOException {
        List<Path> missing = new ArrayList<>();
        for (Path dir = directory; dir != null && !Files.exists(dir); dir = dir.getParent()) {
            missing.add(0, dir);
        }
        for (Path dir : missing) {
            Files.createDirectory(dir);
            if (SafeFiles.posix(dir)) {
                Files.setPosixFilePermissions(dir, SafeFiles.OWNER_ONLY_DIRECTORY);
            }
        }
        return missing;
    }

    private static void removeDirectories(List<Path> created) throws IOException {
        for (int i = created.size() - 1; i >= 0; i--) {
            try (Stream<Path> children = Files.list(created.get(i))) {
                if (children.findAny().isEmpty()) {
                    Files.delete(created.get(i));
                }
            } catch (NoSuchFileException e) {
                // already gone
            }
        }
    }

    private static void writeManifest(Path set, List<Entry> entries, List<Path> directories) throws IOException {
        ObjectNode manifest = JSON.createObjectNode();
        ArrayNode files = manifest.putArray("files");
        for (Entry entry : entries) {
            ObjectNode file = files.addObject();
            file.put("path", entry.path().toString());
            file.put("existed", entry.existed());
            file.put("backup", entry.backup() == null ? null : set.relativize(entry.backup()).toString());
            file.put("permissions", entry.permissions() == null ? null : PosixFilePermissions.toString(entry.permissions()));
            file.put("written", entry.written());
        }
        ArrayNode created = manifest.putArray("directories");
        directories.forEach(directory -> created.add(directory.toString()));
        SafeFiles.write(set.resolve(MANIFEST), JSON.writerWithDefaultPrettyPrinter().writeValueAsString(manifest)
                .getBytes(StandardCharsets.UTF_8), SafeFiles.OWNER_ONLY);
    }

    private static void deleteTree(Path directory) throws IOException {
        if (!Files.exists(directory)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(directory)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }
}
