package dev.execache.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReadFingerprintTest {

    private static Optional<String> of(Path... paths) {
        return ReadFingerprint.of(Stream.of(paths).map(Path::toString).toList());
    }

    /** Changes a file so that nothing but its content and time tell: same size. */
    private static void rewrite(Path file, String sameLengthContent, long seconds) throws Exception {
        Files.writeString(file, sameLengthContent);
        Files.setLastModifiedTime(file, FileTime.from(Instant.ofEpochSecond(seconds)));
    }

    @Test
    void aChangeBehindAnAllowedDirectoryLinkChangesTheFingerprint(@TempDir Path directory) throws Exception {
        Path target = Files.createDirectories(directory.resolve("target"));
        Path file = target.resolve("data.json");
        rewrite(file, "[1]", 1_000);
        Path link = Files.createSymbolicLink(directory.resolve("link"), target);
        Optional<String> before = of(link);

        rewrite(file, "[2]", 2_000);

        assertThat(before).isPresent();
        assertThat(of(link)).isPresent().isNotEqualTo(before);
    }

    @Test
    void aChangeBehindALinkInsideTheTreeChangesTheFingerprint(@TempDir Path workspace, @TempDir Path elsewhere)
            throws Exception {
        Path file = elsewhere.resolve("data.json");
        rewrite(file, "[1]", 1_000);
        Files.createSymbolicLink(workspace.resolve("data.json"), file);
        Files.createSymbolicLink(workspace.resolve("folder"), elsewhere);
        Optional<String> before = of(workspace);

        rewrite(file, "[2]", 2_000);

        assertThat(of(workspace)).isPresent().isNotEqualTo(before);
    }

    @Test
    void repointingALinkChangesTheFingerprint(@TempDir Path workspace, @TempDir Path elsewhere) throws Exception {
        Path first = elsewhere.resolve("a.json");
        Path second = elsewhere.resolve("b.json");
        rewrite(first, "[1]", 1_000);
        rewrite(second, "[2]", 1_000);
        Path link = Files.createSymbolicLink(workspace.resolve("data.json"), first);
        Optional<String> before = of(workspace);

        Files.delete(link);
        Files.createSymbolicLink(link, second);

        assertThat(of(workspace)).isPresent().isNotEqualTo(before);
    }

    @Test
    void aLinkLoopIsWalkedOnceAndGivesAStableFingerprint(@TempDir Path workspace) throws Exception {
        Files.createDirectories(workspace.resolve("a/b"));
        Files.writeString(workspace.resolve("a/b/file.txt"), "x");
        Files.createSymbolicLink(workspace.resolve("a/b/up"), workspace.resolve("a"));
        Files.createSymbolicLink(workspace.resolve("dangling"), workspace.resolve("nowhere"));

        assertThat(of(workspace)).isPresent().isEqualTo(of(workspace));
    }

    @Test
    void aScanThatCannotFinishGivesNoFingerprint(@TempDir Path workspace) throws Exception {
        Files.createSymbolicLink(workspace.resolve("self"), Path.of("/proc/self"));

        assertThat(of(Path.of("/"))).as("the whole machine").isEmpty();
        assertThat(of(Path.of("/proc"))).as("/proc").isEmpty();
        assertThat(of(Path.of("/dev/null"))).as("a device").isEmpty();
        assertThat(of(workspace)).as("a link into /proc").isEmpty();
    }

    @Test
    void tooManyFilesGiveNoFingerprint(@TempDir Path workspace) throws Exception {
        for (int i = 0; i <= ReadFingerprint.MAX_FILES; i++) {
            Files.createFile(workspace.resolve("f" + i));
        }

        assertThat(ReadFingerprint.of(List.of(workspace.toString()))).isEmpty();
    }

    @Test
    void aMissingPathIsPartOfTheFingerprint(@TempDir Path workspace) throws Exception {
        Path later = workspace.resolve("later.txt");
        Optional<String> before = of(later);

        Files.writeString(later, "now here");

        assertThat(before).isPresent();
        assertThat(of(later)).isPresent().isNotEqualTo(before);
    }
}
