package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A SQLite cache on a disk that fills up: a small tmpfs mounted in a private mount namespace
 * ({@code unshare -rm}, no privileges needed where user namespaces are allowed). The cache file
 * is made, then the disk is filled but for room for SQLite's shared-memory index, so reads work
 * and every write (a new result, the counts flushed on close) fails with SQLITE_FULL.
 */
class FullDiskIT {
    @TempDir
    Path dir;

    private static final String SCRIPT = """
            set -u
            java=$1; jar=$2
            mount -t tmpfs -o size=512k tmpfs disk || exit 90
            run() { "$java" -jar "$jar" run double.ts --db disk/cache.db --context "$1" > "$2.out" 2> "$2.err"; echo $? > "$2.rc"; }
            run '{"n":21}' miss
            avail=$(df -k --output=avail disk | tail -1)
            dd if=/dev/zero of=disk/fill bs=1k count=$((avail - 36)) 2>/dev/null
            run '{"n":21}' hit
            run '{"n":22}' full
            "$java" -jar "$jar" clear --db disk/cache.db > clear.out 2> clear.err; echo $? > clear.rc
            ls disk > clear.ls
            """;

    @Test
    void aFullDiskNeverChangesTheExitCodeOrTheResult() throws Exception {
        Files.createDirectory(dir.resolve("disk"));
        Files.writeString(dir.resolve("double.ts"), "return {n: context.n * 2};");
        Files.writeString(dir.resolve("fill.sh"), SCRIPT);
        ProcessBuilder builder = new ProcessBuilder(List.of("unshare", "-rm", "sh", "fill.sh",
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), CliProcess.jar().toString()))
                .directory(dir.toFile()).redirectErrorStream(true).redirectOutput(dir.resolve("sh.log").toFile());
        // One-shot processes: the counts are flushed when each closes its store (a resident server
        // keeps it open), and no server is left behind in the user's runtime directory.
        builder.environment().put("EXECACHE_NO_DAEMON", "1");
        Process process = builder.start();
        assertThat(process.waitFor(5, TimeUnit.MINUTES)).as("the runs finish").isTrue();
        assumeTrue(process.exitValue() != 90 && Files.exists(dir.resolve("miss.rc")),
                "this machine cannot mount a tmpfs in a user namespace: " + Files.readString(dir.resolve("sh.log")));

        assertThat(read("miss.rc")).isEqualTo("0");
        assertThat(read("hit.rc")).as(read("hit.err")).isEqualTo("0");
        assertThat(read("hit.out")).isEqualTo("{\"n\":42}");
        assertThat(read("hit.err")).contains("cache hit").contains("could not save its last counts")
                .doesNotContain("Exception", "\tat ");
        assertThat(read("full.rc")).as(read("full.err")).isEqualTo("0");
        assertThat(read("full.out")).isEqualTo("{\"n\":44}");
        assertThat(read("full.err")).doesNotContain("Exception:", "\tat ");

        // removing rows needs room to commit: the file (it is only a cache) goes instead, and the
        // command says so in one line (here even a new, empty file does not fit: the next command makes one)
        assertThat(read("clear.rc")).as(read("clear.err")).isEqualTo("0");
        assertThat(read("clear.out")).isEqualTo("removed 1 entry");
        assertThat(read("clear.err").lines()).singleElement().asString()
                .contains("could not commit removing its entries").contains("removed the file")
                .doesNotContain("Exception:", "\tat ");
        assertThat(read("clear.ls").lines()).doesNotContain("cache.db-wal");
    }

    private String read(String name) throws Exception {
        return Files.readString(dir.resolve(name)).strip();
    }
}
