package dev.execache.cli.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.execache.cli.settings.Environment;
import dev.execache.cli.settings.Settings;
import dev.execache.gateway.Downstream;
import dev.execache.tools.mcp.McpToolCatalog;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** serve's servers started early: taken when serve asks for the same servers, closed when it asks for others. */
class GatewayCatalogIT {
    private static final Duration LIMIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    private Environment environment() {
        return new Environment(Map.of("PATH", System.getenv("PATH")), dir, new ByteArrayInputStream(new byte[0]));
    }

    /** The lab server, which first writes its name and pid to {@code starts}. */
    private Settings settings(String name) {
        try {
            Path config = Files.writeString(dir.resolve(name + ".yaml"), """
                    servers:
                      quiet:
                        command: node
                        args: ["-e", "require('fs').appendFileSync('starts', '%s ' + process.pid + String.fromCharCode(10)); import('%s')"]
                    """.formatted(name, Downstream.nodeModules().resolveSibling("lab-server.mjs").toUri()));
            return Settings.resolve(Settings.Flags.none().withConfig(config), environment());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private List<String> starts() throws IOException {
        Path starts = dir.resolve("starts");
        return Files.exists(starts) ? Files.readAllLines(starts) : List.of();
    }

    private long pidOf(String name) throws IOException {
        await().atMost(LIMIT).until(() -> starts().stream().anyMatch(line -> line.startsWith(name + " ")));
        return starts().stream().filter(line -> line.startsWith(name + " ")).mapToLong(line -> Long.parseLong(line.split(" ")[1]))
                .findFirst().orElseThrow();
    }

    @Test
    void serveTakesTheServersStartedEarlyForTheSameServersAndEndsThemWhenItAsksForOthers() throws Exception {
        GatewayCatalog.serveEarly(() -> settings("same"), environment());
        try (McpToolCatalog served = GatewayCatalog.serve(settings("same"), environment())) {
            long early = pidOf("same");
            await().atMost(LIMIT).until(() -> served.pid("quiet") > 0);
            assertThat(served.pid("quiet")).as("the process started early").isEqualTo(early);
            assertThat(starts()).containsExactly("same " + early);
        }

        GatewayCatalog.serveEarly(() -> settings("early"), environment());
        long early = pidOf("early");
        try (McpToolCatalog served = GatewayCatalog.serve(settings("other"), environment())) {
            long other = pidOf("other");
            await().atMost(LIMIT).until(() -> ProcessHandle.of(early).map(ProcessHandle::isAlive).orElse(false) == false);
            assertThat(ProcessHandle.of(other).map(ProcessHandle::isAlive)).contains(true);
            await().atMost(LIMIT).until(() -> served.pid("quiet") == other);
        }
    }

    @Test
    void serversStartedEarlyThatServeNeverAskedForEndWithIt() throws Exception {
        GatewayCatalog.serveEarly(() -> settings("unclaimed"), environment());
        long early = pidOf("unclaimed");
        GatewayCatalog.closeUnclaimed();
        await().atMost(LIMIT).until(() -> ProcessHandle.of(early).map(ProcessHandle::isAlive).orElse(false) == false);
    }

    @Test
    void settingsThatCannotBeReadStartNothingEarlyAndServeStartsWhatItIsAskedFor() throws Exception {
        GatewayCatalog.serveEarly(() -> {
            throw new IllegalStateException("a config file with a typo");
        }, environment());
        try (McpToolCatalog served = GatewayCatalog.serve(settings("asked"), environment())) {
            long asked = pidOf("asked");
            await().atMost(LIMIT).until(() -> served.pid("quiet") == asked);
            assertThat(starts()).containsExactly("asked " + asked);
        }
    }
}
