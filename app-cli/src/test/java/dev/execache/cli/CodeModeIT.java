package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.gateway.TestDeno;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Code mode as an agent host meets it, through the official TypeScript SDK client: {@code tools/list} holds execache's
 * own tools whatever servers stand behind it, a server that joins late is found by search_tools and called from
 * code, describe_tools' declarations type-check under {@code deno check}; and in all mode a server's join is one
 * {@code notifications/tools/list_changed}, not one per tool.
 */
class CodeModeIT {
    private static final List<String> OWN = List.of("execute_code", "cache_stats", "invalidate_tool", "clear_cache",
            "search_tools", "describe_tools", "inspect_tool_call");

    @TempDir
    Path dir;

    private Path gate() {
        return dir.resolve("gate");
    }

    /** A config with lab servers named {@code labs} and the gated one (which waits for {@link #gate}). */
    private Path config(List<String> labs, boolean gated) throws Exception {
        Path lab = TypeScriptClient.nodeModules().resolveSibling("lab-server.mjs");
        StringBuilder yaml = new StringBuilder("servers:\n");
        for (String name : labs) {
            yaml.append("  ").append(name).append(":\n    command: node\n    args: [\"").append(lab).append("\"]\n");
        }
        if (gated) {
            yaml.append("  gated:\n    command: node\n    args: [\"")
                    .append(TypeScriptClient.nodeModules().resolveSibling("gated-server.mjs")).append("\"]\n")
                    .append("    env: {LAB_GATE: \"").append(gate()).append("\"}\n");
        }
        return Files.writeString(dir.resolve("execache-" + labs.size() + ".yaml"), yaml);
    }

    private JsonNode run(String scenario, Path config, String expose, Map<String, String> env) throws Exception {
        List<String> arguments = new ArrayList<>(List.of(scenario, ServeProcess.java()));
        arguments.addAll(ServeProcess.command(UUID.randomUUID().toString(),
                List.of("--store", "memory", "--config", config.toString(), "--expose", expose)));
        JsonNode findings = TypeScriptClient.runScript("code-mode-client.mjs", arguments, env);
        assertThat(findings.has("thrown")).as(findings.toString()).isFalse();
        return findings;
    }

    private static List<String> names(JsonNode listed) {
        List<String> names = new ArrayList<>();
        listed.get("names").forEach(name -> names.add(name.textValue()));
        return names;
    }

    @Test
    void inCodeModeToolsListIsTheSameSizeWithOneServerAsWithSeveral() throws Exception {
        JsonNode one = run("list", config(List.of("lab"), false), "code", Map.of("EXECACHE_WARM_POOL", "0",
                "CODE", "return [await tools.lab.get_count({})]"));
        List<String> labs = List.of("lab", "lab2", "lab3", "lab4");
        JsonNode several = run("list", config(labs, false), "code", Map.of("EXECACHE_WARM_POOL", "0",
                "CODE", labs.stream().map(lab -> "await tools." + lab + ".get_count({})")
                        .collect(Collectors.joining(", ", "return [", "]"))));

        System.out.printf("measured: tools/list in code mode: %d bytes with 1 server, %d bytes with %d servers%n",
                one.at("/listed/bytes").intValue(), several.at("/listed/bytes").intValue(), labs.size());
        assertThat(one.at("/ran/isError").booleanValue()).as(one.toString()).isFalse();
        assertThat(several.at("/ran/isError").booleanValue()).as(several.toString()).isFalse();
        assertThat(several.get("searched").intValue()).isEqualTo(4 * one.get("searched").intValue()).isPositive();
        assertThat(names(several.get("listed"))).containsExactlyElementsOf(OWN);
        assertThat(several.at("/listed/bytes").intValue()).isEqualTo(one.at("/listed/bytes").intValue())
                .isLessThanOrEqualTo(4096);
    }

    @Test
    void aServerThatJoinsLateIsFoundBySearchCalledFromCodeAndItsDeclarationTypeChecks() throws Exception {
        JsonNode found = run("code", config(List.of("lab"), true), "code", Map.of(
                "EXECACHE_WARM_POOL", "0", "LAB_GATE", gate().toString(),
                "DENO", TestDeno.executable().toString()));

        assertThat(names(found.get("before"))).containsExactlyElementsOf(OWN);
        assertThat(found.at("/after/bytes").intValue()).isEqualTo(found.at("/before/bytes").intValue());
        assertThat(found.at("/match/name").textValue()).isEqualTo("gated__get_count");
        assertThat(found.at("/match/call").textValue()).isEqualTo("tools.gated.get_count");
        assertThat(found.at("/match/signature").textValue()).contains("(args");
        assertThat(found.at("/called/isError").booleanValue()).as(found.get("called").toString()).isFalse();
        assertThat(found.at("/called/structured/result/served").intValue()).isPositive();
        JsonNode described = found.get("described");
        assertThat(described.get("tools")).hasSize(1);
        assertThat(described.at("/tools/0/name").textValue()).isEqualTo(found.at("/match/name").textValue());
        assertThat(described.get("typescript").textValue()).contains("gated: {").doesNotContain("lab: {");
        assertThat(found.at("/check/status").intValue()).as(found.at("/check/output").textValue()).isZero();
        assertThat(found.at("/direct/isError").booleanValue()).as("a server's tool is still callable by name")
                .isFalse();
        assertThat(found.at("/direct/text").textValue()).contains("\"who\":\"direct\"");
    }

    @Test
    void inAllModeALateServersJoinIsOneListChangedNotOnePerToolAndAListAskedMeanwhileWaitsForIt() throws Exception {
        JsonNode burst = run("burst", config(List.of(), true), "all", Map.of(
                "EXECACHE_WARM_POOL", "0", "LAB_GATE", gate().toString()));

        assertThat(names(burst.get("first"))).as("a list asked while the server starts waits for its tools")
                .contains("gated__get_count");
        assertThat(names(burst.get("after")).stream().filter(name -> name.startsWith("gated__")).count())
                .isGreaterThan(5);
        assertThat(burst.get("listChanged").intValue()).isEqualTo(1);
    }
}
