package dev.execache.store.sqlite;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteJDBCLoader;

/** The driver's native library comes from one per-user copy, so that concurrent first runs do not trip over each other's. */
class NativeLibraryTest {
    private static final int PROCESSES = 6;

    @TempDir
    Path directory;

    /**
     * A stale copy in the shared temporary directory that the driver cannot delete (here a
     * directory by its name) made every start of the driver print its warning, as a copy deleted
     * by another process at the same moment does by chance: neither is looked at any more.
     */
    @Test
    void concurrentFirstRunsShareOneCopyAndNeitherWarnNorTouchTheSharedTemporaryDirectory() throws Exception {
        Path cacheHome = directory.resolve("cache-home");
        Path temporary = Files.createDirectories(directory.resolve("tmp"));
        Path stale = Files.createDirectories(
                temporary.resolve("sqlite-" + SQLiteJDBCLoader.getVersion() + "-stale-libsqlitejdbc.so"));
        Files.writeString(stale.resolve("keep"), "a copy the driver cannot delete");

        List<Process> runs = new ArrayList<>();
        try {
            for (int run = 0; run < PROCESSES; run++) {
                runs.add(start(cacheHome, temporary, run));
            }
            for (int run = 0; run < PROCESSES; run++) {
                Process process = runs.get(run);
                assertThat(process.waitFor(2, TimeUnit.MINUTES)).as("run %d finished", run).isTrue();
                String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                String err = Files.readString(log(run));
                assertThat(process.exitValue()).as("run %d exit code; its stderr: %s", run, err).isZero();
                assertThat(out.strip()).as("run %d read back what it wrote", run).isEqualTo("1");
                assertThat(err).as("run %d stderr", run).doesNotContain("native lib").doesNotContain("Exception");
            }
        } finally {
            runs.forEach(Process::destroyForcibly);
        }

        assertThat(stale.resolve("keep")).exists();
        try (Stream<Path> left = Files.list(temporary)) {
            assertThat(left).as("nothing extracted into the shared temporary directory").containsExactly(stale);
        }
        Path nativeDirectory = cacheHome.resolve("execache/native");
        try (Stream<Path> copies = Files.walk(nativeDirectory)) {
            List<Path> libraries = copies.filter(Files::isRegularFile).toList();
            assertThat(libraries).as("one whole copy, no partial one left").singleElement()
                    .satisfies(library -> assertThat(library.getFileName().toString()).isEqualTo("libsqlitejdbc.so"));
            Path copyDirectory = libraries.get(0).getParent();
            for (Path owned : List.of(nativeDirectory, copyDirectory)) {
                assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(owned)))
                        .as("only its owner can open %s", owned).isEqualTo("rwx------");
            }
        }
    }

    private Process start(Path cacheHome, Path temporary, int run) throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        ProcessBuilder builder = new ProcessBuilder(java.toString(), "-Djava.io.tmpdir=" + temporary,
                "-cp", System.getProperty("java.class.path"), FirstRunWorker.class.getName(),
                directory.resolve("cache-" + run + ".db").toString())
                .redirectError(log(run).toFile());
        builder.environment().put("XDG_CACHE_HOME", cacheHome.toString());
        return builder.start();
    }

    private Path log(int run) {
        return directory.resolve("run-" + run + ".err");
    }
}
