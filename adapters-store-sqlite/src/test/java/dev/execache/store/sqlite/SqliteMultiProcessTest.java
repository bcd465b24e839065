package dev.execache.store.sqlite;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.core.MutableClock;
import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.CacheStore;
import dev.execache.core.spi.Counter;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SqliteMultiProcessTest {
    private static final int WORKERS = 4;
    private static final int ENTRIES_EACH = 400;

    @TempDir
    Path directory;

    @Test
    void fourProcessesWritingAndReadingOneFileAtOnceLoseNothing() throws Exception {
        Path file = directory.resolve("shared/cache.db");
        List<Process> workers = new ArrayList<>();
        try {
            for (int worker = 0; worker < WORKERS; worker++) {
                workers.add(start(file, worker));
            }
            for (int worker = 0; worker < WORKERS; worker++) {
                InputStreamReader out = new InputStreamReader(workers.get(worker).getInputStream(), StandardCharsets.UTF_8);
                assertThat(new BufferedReader(out).readLine())
                        .as("worker %d says it is ready; its log: %s", worker, logOf(worker))
                        .isEqualTo("ready");
            }
            for (Process worker : workers) {
                OutputStream go = worker.getOutputStream();
                go.write('\n');
                go.flush();
            }
            for (int worker = 0; worker < WORKERS; worker++) {
                Process process = workers.get(worker);
                assertThat(process.waitFor(2, TimeUnit.MINUTES)).as("worker %d finished", worker).isTrue();
                assertThat(process.exitValue()).as("worker %d exit code; its log: %s", worker, logOf(worker)).isZero();
                assertThat(logOf(worker)).as("worker %d log", worker).doesNotContain("Exception", "SQLITE_");
            }
        } finally {
            workers.forEach(Process::destroyForcibly);
        }

        try (SqliteCacheStore store = new SqliteCacheStore(file, SharedFileWorker.BOUND, new MutableClock())) {
            assertThat(store.size()).isEqualTo(WORKERS * ENTRIES_EACH);
            for (int worker = 0; worker < WORKERS; worker++) {
                for (int i = 0; i < ENTRIES_EACH; i++) {
                    assertThat(store.peek(SharedFileWorker.key(worker, i)).map(CacheEntry::value))
                            .as("entry %d of worker %d", i, worker)
                            .contains(SharedFileWorker.value(worker, i));
                }
                assertThat(store.lastSeenVersions(CacheStore.DEFAULT_SCOPE)).containsEntry("worker" + worker, "done");
            }
            assertThat(store.counters().totals())
                    .as("no increment lost")
                    .containsEntry(Counter.MISSES, (long) WORKERS * ENTRIES_EACH)
                    .containsEntry(Counter.HITS, (long) WORKERS * ENTRIES_EACH);
            assertThat(store.removeByTool("worker0")).isEqualTo(ENTRIES_EACH);
            assertThat(store.removeByTool("shared")).isEqualTo((WORKERS - 1) * ENTRIES_EACH);
        }
    }

    private Process start(Path file, int worker) throws IOException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        return new ProcessBuilder(java.toString(), "-cp", System.getProperty("java.class.path"),
                SharedFileWorker.class.getName(),
                file.toString(), String.valueOf(worker), String.valueOf(WORKERS), String.valueOf(ENTRIES_EACH))
                .redirectError(log(worker).toFile())
                .start();
    }

    private Path log(int worker) {
        return directory.resolve("worker" + worker + ".log");
    }

    private String logOf(int worker) throws IOException {
        return Files.exists(log(worker)) ? Files.readString(log(worker)) : "";
    }
}
