package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.cli.command.ExitCode;
import dev.execache.gateway.Downstream;
import dev.execache.gateway.TestDeno;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** execache tools: every discovered tool, its digest, and the rule that applies and why. */
class ToolsCommandTest {
    @TempDir
    Path dir;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        return run(Map.of(), args);
    }

    private int run(Map<String, String> environment, String... args) {
        String deno;
        try {
            deno = TestDeno.executable().toString();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        Map<String, String> env = new HashMap<>(environment);
        env.put("XDG_CACHE_HOME", dir.resolve("cache").toString());
        env.put("EXECACHE_DENO", deno);
        return Main.run(args, env, dir,
                new ByteArrayInputStream(new byte[0]),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    /** One lab server and {@code rules}, each a line of the {@code tool_calls.rules} list. */
    private void writeLabConfig(String rules) throws IOException {
        Files.writeString(dir.resolve("execache.yaml"), """
                servers:
                  lab:
                    command: node
                    args: ["%s"]
                tool_calls:
                  rules:
                """.formatted(Downstream.nodeModules().resolveSibling("lab-server.mjs"))
                + rules.lines().map(rule -> "    " + rule + "\n").collect(Collectors.joining()));
    }

    @Test
    void listsEveryToolWithWhyItIsCachedOrNot() throws IOException {
        writeLabConfig("""
                - {tool: "lab__get_other", ttl_seconds: 7}
                """);

        assertThat(run("tools")).isEqualTo(ExitCode.OK);

        String table = out.toString(StandardCharsets.UTF_8);
        assertThat(table).containsPattern("lab\\s+lab__get_count\\s+[0-9a-f]{12}\\s+no\\s+a local server's read, asked"
                + " every time so that a change on disk is seen at once; a rule, cache: true or a ttl on the server, or its"
                + " cache_hint: cache caches it\\s+-");
        assertThat(table).containsPattern("lab__get_other\\s+[0-9a-f]{12}\\s+yes\\s+rule lab__get_other\\s+7 s");
        assertThat(table).containsPattern("lab__increment\\s+[0-9a-f]{12}\\s+no\\s+not read-only \\(annotations\\)\\s+-");
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("server lab: connected (lab 1.0.0), 15 tools");
    }

    @Test
    void theCachesTtlFromTheEnvironmentReachesRulesWithoutTheirOwnAndReadOnlyTools() throws IOException {
        writeLabConfig("""
                - {tool: "lab__get_other"}
                - {tool: "lab__private_items", ttl_seconds: 7}
                """);

        assertThat(run(Map.of("EXECACHE_TTL", "30s"), "tools")).isEqualTo(ExitCode.OK);

        String table = out.toString(StandardCharsets.UTF_8);
        assertThat(table).containsPattern("lab__get_other\\s+[0-9a-f]{12}\\s+yes\\s+rule lab__get_other\\s+30 s");
        assertThat(table).containsPattern("lab__private_items\\s+[0-9a-f]{12}\\s+yes\\s+rule lab__private_items\\s+7 s");
        assertThat(table).containsPattern("lab__get_count\\s+[0-9a-f]{12}\\s+no\\s+a local server's read");
    }

    @Test
    void aServersOwnTtlAndCacheFalseShowAsEachToolsTtlAndReason() throws IOException {
        Files.writeString(dir.resolve("execache.yaml"), """
                servers:
                  lab:
                    command: node
                    args: ["%1$s"]
                    ttl: 45s
                  off:
                    command: node
                    args: ["%1$s"]
                    cache: false
                tool_calls:
                  rules:
                    - {tool: "off__get_other", ttl_seconds: 7}
                """.formatted(Downstream.nodeModules().resolveSibling("lab-server.mjs")));

        assertThat(run("tools")).isEqualTo(ExitCode.OK);

        String table = out.toString(StandardCharsets.UTF_8);
        assertThat(table).containsPattern("lab__get_count\\s+[0-9a-f]{12}\\s+yes\\s+annotation readOnlyHint, server lab:"
                + " ttl\\s+45 s");
        assertThat(table).containsPattern("off__get_count\\s+[0-9a-f]{12}\\s+no\\s+server off: cache: false\\s+-");
        assertThat(table).containsPattern("off__get_other\\s+[0-9a-f]{12}\\s+yes\\s+rule off__get_other\\s+7 s");
    }

    @Test
    void aServerThatCannotStartIsListedAsUnavailableWithItsReasonAndTheExitCodeSaysSo() throws IOException {
        Files.writeString(dir.resolve("execache.yaml"), """
                servers:
                  lab:
                    command: node
                    args: ["%s"]
                    cache: true
                  broken:
                    command: %s
                """.formatted(Downstream.nodeModules().resolveSibling("lab-server.mjs"), dir.resolve("no-such-server")));

        assertThat(run("tools")).isEqualTo(ExitCode.INFRASTRUCTURE);

        String table = out.toString(StandardCharsets.UTF_8);
        assertThat(table).containsPattern("lab\\s+lab__get_count\\s+[0-9a-f]{12}\\s+yes");
        assertThat(table).containsPattern("broken\\s+-\\s+-\\s+-\\s+unavailable: cannot start "
                + Pattern.quote(dir.resolve("no-such-server").toString()) + ": No such file or directory\\s+-");
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("execache: server broken unavailable: cannot start "
                + dir.resolve("no-such-server") + ": No such file or directory");
    }

    @Test
    void withoutServersItSaysSo() {
        assertThat(run("tools")).isEqualTo(ExitCode.USAGE);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("no servers: in the config file");
    }

    /** The lab server, its reads cached (a local server's are asked every time unless it says so). */
    private void labConfig() throws IOException {
        Files.writeString(dir.resolve("execache.yaml"), """
                servers:
                  lab:
                    command: node
                    args: ["%s"]
                    cache: true
                """.formatted(Downstream.nodeModules().resolveSibling("lab-server.mjs")));
    }

    @Test
    void typescriptDeclaresTheToolsCodeCanCall() throws IOException {
        labConfig();

        assertThat(run("tools", "--typescript")).isEqualTo(ExitCode.OK);

        assertThat(out.toString(StandardCharsets.UTF_8)).contains("declare const tools: {\n  lab: {\n")
                .contains("    get_count(args?: {\n      who?: string;\n    }): Promise<unknown>;\n");
    }

    @Test
    void runGivesTheCodeTheConfiguredServersTools() throws IOException {
        labConfig();
        Files.writeString(dir.resolve("code.js"), "return (await tools.lab.get_other({})).served");

        assertThat(run("run", "code.js", "--store", "memory", "--json")).isEqualTo(ExitCode.OK);

        String json = out.toString(StandardCharsets.UTF_8);
        assertThat(json).contains("\"result\":1").contains("\"toolCalls\":[{\"tool\":\"lab__get_other\",\"cache\":\"miss\"");
    }

    @Test
    void inspectFileFindsTheRunOfCodeThatMayCallTheServersKeyedOnTheirIdentities() throws IOException {
        labConfig();
        Files.writeString(dir.resolve("code.js"), "return (await tools.lab.get_other({})).served");
        assertThat(run("run", "code.js")).isEqualTo(ExitCode.OK);
        out.reset();

        assertThat(run("inspect", "--file", "code.js")).as(err.toString(StandardCharsets.UTF_8)).isEqualTo(ExitCode.OK);
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("tools      lab__get_other");
    }

    @Test
    void inspectToolCallShowsTheCachedCallOfAGatewayTool() throws IOException {
        labConfig();
        Files.writeString(dir.resolve("code.js"), "return (await tools.lab.get_count({who: 'cli'})).served");
        assertThat(run("run", "code.js")).isEqualTo(ExitCode.OK);
        out.reset();

        int found = run("inspect", "--tool-call", "lab__get_count", "--args", "{\"who\": \"cli\"}");
        String shown = out.toString(StandardCharsets.UTF_8);
        int other = run("inspect", "--tool-call", "lab__get_count", "--args", "{\"who\": \"else\"}");
        int unknown = run("inspect", "--tool-call", "lab__nope");
        int badArgs = run("inspect", "--tool-call", "lab__get_count", "--args", "[1]");

        assertThat(found).isEqualTo(ExitCode.OK);
        assertThat(shown).contains("label      lab__get_count {\"who\":\"cli\"}").contains("hits       0")
                .containsPattern("ttl left   [0-4]m \\(until ").contains("tools      lab__get_count");
        assertThat(other).isEqualTo(ExitCode.NOT_FOUND);
        assertThat(unknown).isEqualTo(ExitCode.USAGE);
        assertThat(badArgs).isEqualTo(ExitCode.USAGE);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("no server offers 'lab__nope'")
                .contains("--args: must be a JSON object");
    }
}
