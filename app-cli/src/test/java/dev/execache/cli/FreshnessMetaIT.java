package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.gateway.Downstream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Every answer says where it came from, through the packaged {@code serve} and the official
 * TypeScript SDK clients (1.x in the 2025-11-25 era, 2.x pinned to 2026-07-28), over stdio and
 * Streamable HTTP: {@code _meta["dev.execache/cache"]} on a miss, a hit, a call asked fresh, a bypass
 * and a shared run, and the clients accept every result (they validate them).
 */
// each test has its own serve and mostly waits out its runs' six seconds: they run at once
@Execution(ExecutionMode.CONCURRENT)
class FreshnessMetaIT {
    private static final String TOKEN = "freshness-token-0123456789abcdef";
    private static final Map<String, String> NO_POOL = Map.of("EXECACHE_WARM_POOL", "0");

    @TempDir
    Path dir;

    private Path config() throws Exception {
        Path config = dir.resolve("execache.yaml");
        Files.writeString(config, """
                servers:
                  lab:
                    command: node
                    args: ["%s"]
                tool_calls:
                  rules:
                    - {tool: "lab__get_count", ttl_seconds: 300}
                """.formatted(Downstream.nodeModules().resolveSibling("lab-server.mjs")));
        return config;
    }

    private static JsonNode client(List<String> arguments, Map<String, String> env) throws Exception {
        return TypeScriptClient.runScript("freshness-client.mjs", arguments, env);
    }

    @Test
    void serveTtlReachesARuleThatGivesNoTtlOfItsOwn() throws Exception {
        Path config = dir.resolve("execache.yaml");
        Files.writeString(config, """
                servers:
                  lab:
                    command: node
                    args: ["%s"]
                tool_calls:
                  rules:
                    - {tool: "lab__get_count"}
                """.formatted(Downstream.nodeModules().resolveSibling("lab-server.mjs")));
        List<String> arguments = new ArrayList<>(List.of("sdk1", "stdio", ServeProcess.java()));
        arguments.addAll(ServeProcess.command("freshness-ttl",
                List.of("--store", "memory", "--config", config.toString(), "--ttl", "30s")));

        JsonNode out = client(arguments, NO_POOL);

        assertThat(out.at("/miss/status").textValue()).isEqualTo("miss");
        assertThat(out.at("/miss/freshForSeconds").longValue()).isBetween(29L, 30L);
        assertThat(out.at("/hit/status").textValue()).isEqualTo("hit");
    }

    @ParameterizedTest
    @CsvSource({"sdk1, stdio", "sdk2, stdio", "sdk1, http", "sdk2, http"})
    void everyAnswerSaysWhereItCameFromAndTheClientsAcceptIt(String clientKind, String transport) throws Exception {
        Path config = config();
        JsonNode out;
        if (transport.equals("stdio")) {
            List<String> arguments = new ArrayList<>(List.of(clientKind, "stdio", ServeProcess.java()));
            arguments.addAll(ServeProcess.command("freshness-" + clientKind,
                    List.of("--store", "memory", "--config", config.toString())));
            out = client(arguments, NO_POOL);
        } else {
            Path tokens = dir.resolve("tokens");
            Files.writeString(tokens, "agent-a " + TOKEN + "\n");
            Files.setPosixFilePermissions(tokens, PosixFilePermissions.fromString("rw-------"));
            try (HttpServeProcess server = HttpServeProcess.start(NO_POOL, "--store", "memory", "--config",
                    config.toString(), "--http", "127.0.0.1:0", "--http-token-file", tokens.toString())) {
                out = client(List.of(clientKind, "http", server.url(), TOKEN), Map.of());
            }
        }

        assertThat(out.has("thrown")).as(out.path("thrown").asText()).isFalse();
        assertThat(out.get("era").textValue()).isEqualTo(clientKind.equals("sdk1") ? "legacy" : "modern");
        assertThat(out.at("/miss/status").textValue()).isEqualTo("miss");
        assertThat(out.at("/miss/ageSeconds").longValue()).isZero();
        assertThat(out.at("/miss/freshForSeconds").longValue()).isBetween(299L, 300L);
        assertThat(out.at("/hit/status").textValue()).isEqualTo("hit");
        assertThat(out.at("/hit/freshForSeconds").longValue()).isBetween(1L, 300L);
        assertThat(out.get("sameContent").booleanValue()).as("a hit's content is the server's").isTrue();
        assertThat(out.at("/fresh/status").textValue()).isEqualTo("miss");
        assertThat(out.get("freshText").textValue()).contains("\"served\":2");
        assertThat(out.at("/bypass/status").textValue()).isEqualTo("bypass");
        assertThat(out.at("/bypass/reason").textValue()).isEqualTo("not read-only (annotations)");
        assertThat(out.at("/bypass/freshForSeconds").isMissingNode()).isTrue();
        // each attempt is one run and one identical run asked while it runs: shared, or (when the
        // machine held the second back until the first was stored) a hit; never run twice
        for (JsonNode attempt : out.get("attempts")) {
            List<String> statuses = List.of(attempt.at("/statuses/0").asText(), attempt.at("/statuses/1").asText());
            assertThat(statuses).as(attempt.toString()).isIn(List.of("miss", "shared"), List.of("miss", "hit"));
        }
        List<String> runs = List.of(out.at("/runs/0/status").textValue(), out.at("/runs/1/status").textValue());
        assertThat(runs).as("attempts: %s", out.get("attempts")).containsExactlyInAnyOrder("miss", "shared");
        assertThat(out.at("/runAgain/status").textValue()).isEqualTo("hit");
        assertThat(out.get("runResult").textValue()).isEqualTo("run " + out.get("runWho").textValue());
        assertThat(out.get("runWho").textValue()).startsWith(clientKind + "-" + transport);
        assertThat(out.at("/refused/isError").booleanValue()).isTrue();
        assertThat(out.at("/refused/text").textValue()).contains("_meta.dev.execache/cache-control")
                .contains("\"soon\"");
        assertThat(out.get("done").booleanValue()).isTrue();
    }
}
