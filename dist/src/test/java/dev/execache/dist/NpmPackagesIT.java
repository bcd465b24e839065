package dev.execache.dist;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.execache.sandbox.DenoSandboxSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packed npm packages installed into an empty prefix on a machine with Node and no Java (and no
 * Deno): execache's own two packages from their files, their dependencies (deno) from the registry.
 */
class NpmPackagesIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path root;
    private static NoJavaMachine machine;
    private static Path prefix;

    @BeforeAll
    static void install() throws Exception {
        machine = NoJavaMachine.in(root);
        prefix = Files.createDirectories(root.resolve("prefix"));
        machine.run(prefix, List.of("npm", "install", "--no-audit", "--no-fund", "--loglevel=error",
                Release.npmPackage().toString(), Release.npmPlatformPackage().toString())).succeeded();
    }

    @AfterAll
    static void stopTheResidentServer() {
        if (machine != null) {
            machine.run(prefix, List.of("npx", "--no-install", "execache", "server", "stop"));
        }
    }

    @Test
    void npxExecacheServeAnswersTheTypeScriptSdkClientWithTheDenoOfItsDependency() throws Exception {
        JsonNode session = ServeDriver.drive(machine, prefix, List.of("npx", "execache", "serve"));

        assertThat(ServeDriver.toolNames(session)).contains("execute_code", "cache_stats");
        assertThat(session.path("first").path("result").path("sum").asInt()).isEqualTo(42);
        assertThat(session.path("first").path("cache").asText()).isEqualTo("miss");
        assertThat(session.path("second").path("cache").asText()).isEqualTo("hit");
        assertThat(root.resolve("cache/execache/deno-" + DenoSandboxSettings.DENO_VERSION))
                .as("execache installed no Deno of its own: the package's dependency was found").doesNotExist();
    }

    @Test
    void thePlatformPackageBringsTheJavaRuntimeAndDenoComesPinned() throws Exception {
        assertThat(prefix.resolve("node_modules/@execache/linux-x64/runtime/bin/java")).isExecutable();
        JsonNode deno = JSON.readTree(prefix.resolve("node_modules/deno/package.json").toFile());
        assertThat(deno.path("version").asText()).isEqualTo(DenoSandboxSettings.DENO_VERSION);

        String version = machine.run(prefix, List.of("npx", "execache", "--version")).succeeded().stdout();

        assertThat(version).startsWith("execache " + Release.version() + " (");
        assertThat(Files.readString(prefix.resolve("node_modules/execache/bin/execache.js")))
                .as("the install script put the bash launcher in the Node launcher's place").startsWith("#!/usr/bin/env bash");
    }

    @Test
    void setupWritesNpmsLinkAsTheCommandNotTheFileInsideNodeModules() throws Exception {
        Files.createDirectories(machine.home.resolve(".cursor"));
        Files.writeString(machine.home.resolve(".cursor/mcp.json"),
                "{\"mcpServers\": {\"memory\": {\"command\": \"npx\", \"args\": [\"-y\", \"server-memory\"]}}}\n");

        String shown = machine.run(prefix, List.of("npx", "execache", "setup", "--apply", "--dry-run", "--client", "cursor"))
                .succeeded().stdout();

        assertThat(shown).contains("(" + prefix.resolve("node_modules/.bin/execache") + " serve --config ");
    }

    /** Installed without scripts: the Node launcher, not the bash one put in its place. */
    @Test
    void withoutItsPlatformPackageItUsesTheJavaOfJavaHomeElseSaysInOneLineWhatToInstall() throws Exception {
        Path elsewhere = Files.createDirectories(root.resolve("elsewhere"));
        machine.run(elsewhere, List.of("npm", "install", "--no-audit", "--no-fund", "--loglevel=error", "--ignore-scripts",
                Release.npmPackage().toString(), Release.npmPlatformPackage().toString())).succeeded();
        assertThat(Files.readString(elsewhere.resolve("node_modules/execache/bin/execache.js"))).startsWith("#!/usr/bin/env node");
        // as npm leaves it on another platform: the platform package's os and cpu do not match
        machine.run(elsewhere, List.of("rm", "-rf", "node_modules/@execache/linux-x64")).succeeded();
        String launcher = elsewhere.resolve("node_modules/.bin/execache").toString();

        NoJavaMachine.Result noJava = machine.run(elsewhere, List.of(launcher, "--version"));
        NoJavaMachine.Result withJavaHome = machine.run(elsewhere, List.of(launcher, "--version"),
                Map.of("JAVA_HOME", System.getProperty("java.home")));

        assertThat(noJava.exitCode()).isEqualTo(3);
        assertThat(noJava.stderr()).startsWith("execache: needs Java 17 or newer").hasLineCount(1);
        assertThat(withJavaHome.succeeded().stdout()).startsWith("execache " + Release.version() + " (");
    }
}
