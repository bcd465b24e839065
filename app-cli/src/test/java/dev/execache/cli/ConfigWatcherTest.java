package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.cli.settings.ConfigWatcher;
import dev.execache.core.CacheStatus;
import dev.execache.core.ExecutionOutcome;
import dev.execache.core.ExecutionRequest;
import dev.execache.core.CapturedLog;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigWatcherTest {
    @TempDir
    Path dir;

    private Path file;
    private ServeFixture fixture;
    private CapturedLog log;

    @BeforeEach
    void setUp() throws IOException {
        file = dir.resolve("execache.yaml");
        write("tools:\n  github: v1\n  jira: j1\n");
        fixture = new ServeFixture(dir, Map.of("github", "v1", "jira", "j1"));
        log = new CapturedLog();
    }

    @AfterEach
    void tearDown() {
        log.close();
    }

    private void write(String yaml) throws IOException {
        Files.writeString(file, yaml);
    }

    private ExecutionOutcome run(String code, String tool) {
        return fixture.executor.execute(new ExecutionRequest(code, Map.of(), Set.of(tool), fixture.settings.limits()));
    }

    @Test
    void aChangedVersionRemovesOnlyThatToolsEntriesAndTheLogSaysHowMany() throws IOException {
        ConfigWatcher watcher = new ConfigWatcher(file, fixture.versions, Set.of());
        run("return 1", "github");
        run("return 2", "github");
        run("return 3", "jira");

        write("tools:\n  github: v2\n  jira: j1\n");
        watcher.poll();

        assertThat(fixture.versions.versions()).containsEntry("github", "v2");
        assertThat(log.lines()).contains("tool github changed (v1 -> v2): removed 2 entries");
        assertThat(run("return 3", "jira").status()).isEqualTo(CacheStatus.HIT);
        assertThat(run("return 1", "github").status()).isEqualTo(CacheStatus.MISS);
    }

    @Test
    void anUnchangedFileChangesNothing() {
        ConfigWatcher watcher = new ConfigWatcher(file, fixture.versions, Set.of());
        run("return 1", "github");

        watcher.poll();
        watcher.poll();

        assertThat(log.lines()).isEmpty();
        assertThat(run("return 1", "github").status()).isEqualTo(CacheStatus.HIT);
    }

    @Test
    void anEditorThatReplacesTheFileIsSeen() throws IOException {
        ConfigWatcher watcher = new ConfigWatcher(file, fixture.versions, Set.of());
        Path replacement = dir.resolve(".execache.yaml.swp");
        Files.writeString(replacement, "tools:\n  github: v1\n  jira: j2\n");

        Files.move(replacement, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        watcher.poll();

        assertThat(fixture.versions.versions()).containsEntry("jira", "j2");
    }

    @Test
    void aSchemaIsVersionedByItsFingerprint() throws IOException {
        ConfigWatcher watcher = new ConfigWatcher(file, fixture.versions, Set.of());

        write("tools:\n  github: v1\n  jira: {type: object, properties: {id: {type: string}}}\n");
        watcher.poll();

        assertThat(fixture.versions.versions().get("jira")).startsWith("schema:");
    }

    @Test
    void aNewToolBecomesKnown() throws IOException {
        ConfigWatcher watcher = new ConfigWatcher(file, fixture.versions, Set.of());

        write("tools:\n  github: v1\n  jira: j1\n  slack: s1\n");
        watcher.poll();

        assertThat(fixture.versions.versions()).containsEntry("slack", "s1");
        assertThat(log.lines()).contains("tool slack added (s1)");
    }

    @Test
    void aToolPinnedOnTheCommandLineKeepsItsVersion() throws IOException {
        ConfigWatcher watcher = new ConfigWatcher(file, fixture.versions, Set.of("github"));

        write("tools:\n  github: v9\n  jira: j1\n");
        watcher.poll();

        assertThat(fixture.versions.versions()).containsEntry("github", "v1");
    }

    @Test
    void aFileThatCannotBeParsedChangesNothingAndSaysWhy() throws IOException {
        ConfigWatcher watcher = new ConfigWatcher(file, fixture.versions, Set.of());
        run("return 1", "github");

        write("tools:\n  github: v2\n  colour: [\n");
        watcher.poll();
        write("tools:\n  github: v2\nunknown_key: 1\n");
        watcher.poll();

        assertThat(fixture.versions.versions()).containsEntry("github", "v1");
        assertThat(log.lines()).hasSize(2).allMatch(line -> line.startsWith("config changed but cannot be used"));
        assertThat(log.lines().get(1)).contains("unknown_key");
        assertThat(run("return 1", "github").status()).isEqualTo(CacheStatus.HIT);
    }

    @Test
    void aDeletedFileKeepsTheVersionsInUse() throws IOException {
        ConfigWatcher watcher = new ConfigWatcher(file, fixture.versions, Set.of());

        Files.delete(file);
        watcher.poll();
        watcher.poll();

        assertThat(fixture.versions.versions()).containsEntry("github", "v1").containsEntry("jira", "j1");
        assertThat(log.lines()).containsExactly(file + " is gone; the tool versions in use stay");
    }

    @Test
    void aFileCreatedAfterTheStartIsApplied() throws IOException {
        Files.delete(file);
        ConfigWatcher watcher = new ConfigWatcher(file, fixture.versions, Set.of());

        write("tools:\n  github: v2\n");
        watcher.poll();

        assertThat(fixture.versions.versions()).containsEntry("github", "v2");
    }

    @Test
    void otherSettingsAreNotedAsTakingEffectAtRestart() throws IOException {
        ConfigWatcher watcher = new ConfigWatcher(file, fixture.versions, Set.of());

        write("tools:\n  github: v1\n  jira: j1\ncode_execution:\n  cache:\n    ttl_seconds: 60\n");
        watcher.poll();

        assertThat(log.lines()).anyMatch(line -> line.contains("take effect when execache serve restarts"));
    }
}
