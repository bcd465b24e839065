package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.gateway.Downstream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code execache serve} as an agent host starts it: from a directory of the host's choosing, with
 * the person's configuration, and servers behind it that are slow, silent or broken. The official
 * TypeScript SDK client drives it.
 */
class ServeStartIT {
    @TempDir
    Path dir;

    private Path gate;
    private Path config;

    /** In the person's config home: the client starts serve in its own directory, which has no execache.yaml. */
    private Map<String, String> personsConfig() throws Exception {
        return personsConfig(true);
    }

    /** @param silent with a server that never answers (a list waits for it as long as its start may take) */
    private Map<String, String> personsConfig(boolean silent) throws Exception {
        gate = dir.resolve("gate");
        Path xdg = dir.resolve("xdg");
        config = Files.createDirectories(xdg.resolve("execache")).resolve("execache.yaml");
        Files.writeString(config, """
                servers:
                  broken:
                    command: %s
                %s  gated:
                    command: node
                    args: ["%s"]
                    env: {LAB_GATE: "%s"}
                """.formatted(dir.resolve("no-such-server"), silent ? """
                  silent:
                    command: node
                    args: ["-e", "setInterval(() => {}, 1000)"]
                """ : "", TypeScriptClient.nodeModules().resolveSibling("gated-server.mjs"), gate));
        return Map.of("XDG_CONFIG_HOME", xdg.toString(), "EXECACHE_WARM_POOL", "0");
    }

    private static List<String> names(JsonNode event) {
        List<String> names = new ArrayList<>();
        event.get("names").forEach(name -> names.add(name.textValue()));
        return names;
    }

    @Test
    void initializeIsAnsweredWhileAServerStillStartsAListAskedThenWaitsForItsToolsWhichComeByListChangedTooAndABrokenServerIsOneLine()
            throws Exception {
        try (TypeScriptClient client = TypeScriptClient.start("late-servers", personsConfig(false), "--store", "memory")) {
            client.await("initialized");
            client.await("listing");

            assertThat(Files.exists(gate)).as("the gated server cannot have answered yet").isFalse();

            Files.createFile(gate);
            JsonNode listed = client.await("listed");
            assertThat(names(listed)).as("a client that lists once, while a server starts, sees its tools")
                    .contains("execute_code", "describe_tools", "gated__get_count");
            JsonNode changed = client.await("list-changed");
            while (!names(changed).contains("gated__get_count")) {
                changed = client.await("list-changed");
            }
            client.send("go");
            JsonNode servers = client.await("described").get("servers");
            JsonNode called = client.await("called");

            assertThat(called.get("isError").booleanValue()).as(called.toString()).isFalse();
            assertThat(called.get("text").textValue()).contains("\"served\":1");
            assertThat(servers.findValuesAsText("name")).containsExactly("broken", "gated");
            assertThat(servers.get(0).get("state").textValue()).isEqualTo("unavailable");
            assertThat(servers.get(0).get("reason").textValue())
                    .isEqualTo("cannot start " + dir.resolve("no-such-server") + ": No such file or directory");
            assertThat(servers.get(1).get("state").textValue()).isEqualTo("up");
            List<String> serveLines = client.stderr().stream().filter(line -> line.startsWith("execache:")).toList();
            assertThat(serveLines.get(0)).startsWith("execache: config file: " + config + " (looked for execache.yaml in ")
                    .endsWith(config + ", " + config.resolveSibling("config.yaml") + ")");
            assertThat(client.stderr().stream().filter(line -> line.contains("broken")))
                    .singleElement().asString()
                    .contains(dir.resolve("no-such-server").toString()).contains("No such file or directory");
            assertThat(client.stderr()).noneMatch(line -> line.contains("Client failed during connect"))
                    .noneMatch(line -> line.contains("Exception"));
        }
    }

    @Test
    void everyServerServeStartedEndsWhenServeIsKilledEvenOneThatNeverAnswered() throws Exception {
        assertServersEndWithServe(ProcessHandle::destroyForcibly);
    }

    @Test
    void everyServerServeStartedEndsWhenServeIsTerminatedEvenOneThatNeverAnswered() throws Exception {
        assertServersEndWithServe(ProcessHandle::destroy);
    }

    private void assertServersEndWithServe(Consumer<ProcessHandle> end) throws Exception {
        try (TypeScriptClient client = TypeScriptClient.start("late-servers", personsConfig(), "--store", "memory")) {
            client.await("initialized");
            ProcessHandle serve = client.server();
            // the silent server, and the gated one that has not answered either: neither reads its stdin
            Downstream.await("serve started both node servers", Duration.ofSeconds(60), () -> nodeUnder(serve).size() == 2);
            List<ProcessHandle> servers = nodeUnder(serve);

            end.accept(serve);

            Downstream.await("the servers ended with serve", Duration.ofSeconds(60),
                    () -> servers.stream().noneMatch(ProcessHandle::isAlive));
            assertThat(servers).noneMatch(ProcessHandle::isAlive);
        }
    }

    private static List<ProcessHandle> nodeUnder(ProcessHandle serve) {
        return serve.descendants().filter(ProcessHandle::isAlive)
                .filter(process -> process.info().command().map(command -> command.endsWith("node")).orElse(false))
                .toList();
    }

    @Test
    void servedAsAHostStartsItEachServerStartsOnceBeforeServeHasReadItsCommandLineAndServeStillSaysItsConfigFileFirst()
            throws Exception {
        Path starts = dir.resolve("starts");
        Path config = Files.writeString(dir.resolve("execache.yaml"), """
                servers:
                  broken:
                    command: %s
                  counted:
                    command: node
                    args: ["-e", "require('fs').appendFileSync(process.env.STARTS, 'x'); import(process.env.LAB)"]
                    env: {STARTS: "%s", LAB: "%s"}
                """.formatted(dir.resolve("no-such-server"), starts,
                Downstream.nodeModules().resolveSibling("lab-server.mjs").toUri()));
        // the command line setup writes into a host's file: serve --config FILE, the form whose servers start early
        try (ServeProcess serve = ServeProcess.start(Map.of("EXECACHE_WARM_POOL", "0"), "--config", config.toString())) {
            List<String> tools = serve.client().listTools().block().tools().stream().map(tool -> tool.name()).toList();
            assertThat(tools).as("a list waits for the servers still starting").contains("counted__get_count");
            assertThat(Files.readString(starts)).as("started once: early, and taken by serve").isEqualTo("x");
            serve.awaitStderr(line -> line.contains("no-such-server"), Duration.ofSeconds(30));
            List<String> serveLines = serve.stderr().stream().filter(line -> line.startsWith("execache:")).toList();
            assertThat(serveLines.get(0)).as("what the servers logged before serve said which file it read waited for it")
                    .startsWith("execache: config file: " + config + " (");
        }
        assertThat(Files.readString(starts)).isEqualTo("x");
    }

    /**
     * Every start opens serve's jar, and the JVM reads its index entry by entry in its interpreter before anything
     * starts: the jar holds no entry the JVM would never read, as the versions of a multi-release jar in one that is not.
     */
    @Test
    void serveJarHoldsNoEntriesTheJvmNeverReads() throws Exception {
        try (JarFile jar = new JarFile(CliProcess.jar().toFile())) {
            assertThat(jar.isMultiRelease()).isFalse();
            assertThat(jar.stream().map(entry -> entry.getName()).filter(name -> name.startsWith("META-INF/versions/")))
                    .isEmpty();
        }
    }
}
