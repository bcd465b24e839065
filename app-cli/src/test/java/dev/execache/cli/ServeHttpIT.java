package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.gateway.Downstream;
import dev.execache.mcp.server.RawHttp;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code execache serve --http} as a remote agent reaches it: the packaged jar, the official
 * TypeScript client 2.x over Streamable HTTP in each way it negotiates the era (and pinned to
 * 2026-07-28 over stdio), a token from a file, a stream closed mid-run, SIGTERM, and the
 * settings it refuses. One server, with a token, is shared by the tests that need one.
 */
class ServeHttpIT {
    private static final String TOKEN = "it-token-0123456789abcdef0123456789";
    private static final Map<String, String> NO_POOL = Map.of("EXECACHE_WARM_POOL", "0");

    @TempDir
    static Path dir;

    private static HttpServeProcess server;

    @BeforeAll
    static void start() throws Exception {
        Path tokens = dir.resolve("tokens");
        Files.writeString(tokens, "# agents\nagent-a " + TOKEN + "\nagent-b other-token-0123456789abcdef\n");
        Files.setPosixFilePermissions(tokens, PosixFilePermissions.fromString("rw-------"));
        server = HttpServeProcess.start(NO_POOL, "--store", "memory", "--http", "127.0.0.1:0",
                "--http-token-file", tokens.toString());
    }

    @AfterAll
    static void stop() throws InterruptedException {
        if (server != null) {
            server.close();
        }
    }

    private static JsonNode erasClient(List<String> arguments, Map<String, String> env) throws Exception {
        return TypeScriptClient.runScript("eras-client.mjs", arguments, env);
    }

    private static void assertWorked(JsonNode out, String era) {
        assertThat(out.has("thrown")).as(out.path("thrown").asText()).isFalse();
        assertThat(out.get("era").textValue()).isEqualTo(era);
        assertThat(out.get("tools")).extracting(JsonNode::textValue)
                .contains("execute_code", "cache_stats", "invalidate_tool", "clear_cache");
        assertThat(out.at("/first/structured/result/sum").intValue()).isEqualTo(3);
        assertThat(out.at("/second/structured/cache").textValue()).isEqualTo("hit");
        assertThat(out.at("/slow/isError").booleanValue()).isFalse();
        assertThat(out.get("progress").intValue()).as("progress notifications on the call's stream").isPositive();
        assertThat(out.get("done").booleanValue()).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"legacy", "auto", "pinned"})
    void theTypeScriptClientWorksOverHttpInEveryNegotiationMode(String mode) throws Exception {
        JsonNode out = erasClient(List.of(mode, "http", server.url(), TOKEN), Map.of());

        assertWorked(out, mode.equals("legacy") ? "legacy" : "modern");
        if (!mode.equals("legacy")) {
            assertThat(out.get("protocolVersion").textValue()).isEqualTo("2026-07-28");
            assertThat(out.get("listTtlMs").longValue()).isPositive();
            assertThat(out.get("listCacheScope").textValue()).isEqualTo("public");
        }
    }

    @Test
    void theTypeScriptClientPinnedTo20260728WorksOverStdio() throws Exception {
        List<String> arguments = new ArrayList<>(List.of("pinned", "stdio", ServeProcess.java()));
        arguments.addAll(ServeProcess.command("eras-stdio", List.of("--store", "memory")));

        JsonNode out = erasClient(arguments, NO_POOL);

        assertWorked(out, "modern");
        assertThat(out.get("protocolVersion").textValue()).isEqualTo("2026-07-28");
    }

    @Test
    void aRequestWithoutTheTokenIsRefusedAndTheTokenIsNeverLogged() throws Exception {
        RawHttp.Answer refused = RawHttp.post(server.port(), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", Map.of());
        RawHttp.Answer admitted = RawHttp.post(server.port(), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
                Map.of("Authorization", "Bearer " + TOKEN));

        assertThat(refused.status()).isEqualTo(401);
        assertThat(refused.header("WWW-Authenticate")).startsWith("Bearer");
        assertThat(admitted.status()).isEqualTo(200);
        assertThat(server.stderr()).noneMatch(line -> line.contains(TOKEN));
    }

    @Test
    void closingTheStreamOfARunningCallKillsTheRunAndStoresNothing() throws Exception {
        Path scripts = TypeScriptClient.nodeModules().getParent();
        Process node = new ProcessBuilder("node", scripts.resolve("eras-client.mjs").toString(), "cancel", "http",
                server.url(), TOKEN).directory(scripts.toFile()).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(node.getInputStream(), StandardCharsets.UTF_8));
                OutputStream control = node.getOutputStream()) {
            assertThat(out.readLine()).contains("calling");
            ServeWithTypeScriptClientIT.awaitCondition(() -> ServeWithTypeScriptClientIT.denoUnder(server.handle()).size() == 1);
            List<ProcessHandle> runs = ServeWithTypeScriptClientIT.denoUnder(server.handle());

            control.write("cancel\n".getBytes(StandardCharsets.UTF_8));
            control.flush();
            JsonNode cancelled = TypeScriptClient.JSON.readTree(out.readLine());
            ServeWithTypeScriptClientIT.awaitCondition(() -> runs.stream().noneMatch(ProcessHandle::isAlive));
            control.write("stats\n".getBytes(StandardCharsets.UTF_8));
            control.flush();
            JsonNode stats = TypeScriptClient.JSON.readTree(out.readLine());

            assertThat(cancelled.at("/how/rejected").textValue()).isNotNull();
            assertThat(runs).noneMatch(ProcessHandle::isAlive);
            assertThat(stats.at("/stats/entries").intValue()).isZero();
            assertThat(server.stderr()).anyMatch(line -> line.contains("closed the stream of a tool call"));
        } finally {
            node.destroy();
        }
    }

    @Test
    void sigtermAnswersTheCallStillRunningThatTheServerIsStopping() throws Exception {
        try (HttpServeProcess own = HttpServeProcess.start(NO_POOL, "--store", "memory", "--http", "0")) {
            String call = "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"execute_code\","
                    + "\"arguments\":{\"code\":\"while (true) {}\",\"timeout\":25}}}";
            CompletableFuture<RawHttp.Answer> answer = CompletableFuture.supplyAsync(() -> {
                try {
                    return RawHttp.post(own.port(), call, Map.of("Accept", "application/json"));
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            ServeWithTypeScriptClientIT.awaitCondition(() -> ServeWithTypeScriptClientIT.denoUnder(own.handle()).size() == 1);
            List<ProcessHandle> runs = ServeWithTypeScriptClientIT.denoUnder(own.handle());

            own.terminate(Duration.ofSeconds(60));
            JsonNode stopped = answer.get(60, TimeUnit.SECONDS).json();

            assertThat(stopped.at("/result/isError").booleanValue()).as(stopped + "\n" + String.join("\n", own.stderr())).isTrue();
            assertThat(stopped.at("/result/content/0/text").textValue()).contains("ShutdownError", "shutting down");
            assertThat(runs).noneMatch(ProcessHandle::isAlive);
        }
    }

    @Test
    void theGatewayAndCodeThatCallsToolsWorkOverHttp() throws Exception {
        Path config = Files.writeString(dir.resolve("gateway.yaml"), """
                servers:
                  lab:
                    command: node
                    args: ["%s"]
                    cache: true  # a local server's reads are asked every time unless it says to cache them
                """.formatted(Downstream.nodeModules().resolveSibling("lab-server.mjs")));
        try (HttpServeProcess gateway = HttpServeProcess.start(NO_POOL, "--store", "memory", "--config", config.toString(),
                "--http", "0")) {
            Map<String, String> json = Map.of("Accept", "application/json");
            String list = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}";
            String gatewayCall = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"lab__get_count\","
                    + "\"arguments\":{\"who\":\"http\"}}}";
            String code = "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"execute_code\","
                    + "\"arguments\":{\"code\":\"return await tools.lab.get_count({who: 'code'})\"}}}";

            JsonNode tools = RawHttp.post(gateway.port(), list, json).json().at("/result/tools");
            JsonNode first = RawHttp.post(gateway.port(), gatewayCall, json).json().get("result");
            JsonNode second = RawHttp.post(gateway.port(), gatewayCall, json).json().get("result");
            JsonNode ran = RawHttp.post(gateway.port(), code, json).json().at("/result/structuredContent");

            assertThat(tools.findValuesAsText("name")).contains("lab__get_count", "describe_tools", "execute_code");
            assertThat(first.at("/content/0/text").textValue()).contains("\"who\":\"http\"");
            assertThat(second.at("/content/0/text").textValue()).isEqualTo(first.at("/content/0/text").textValue());
            assertThat(ran.at("/result/who").textValue()).isEqualTo("code");
            assertThat(ran.at("/toolCalls/0/tool").textValue()).isEqualTo("lab__get_count");

            // a call answered as an SSE stream carries the server's progress under the agent's token
            String progressCall = "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":"
                    + "\"lab__progress_steps\",\"arguments\":{\"steps\":2},\"_meta\":{\"progressToken\":\"http-agent\"}}}";
            List<JsonNode> events = RawHttp.post(gateway.port(), progressCall, Map.of()).events();
            assertThat(events).extracting(event -> event.path("method").asText() + " "
                    + event.at("/params/progressToken").asText() + " " + event.at("/params/progress").asText())
                    .containsExactly("notifications/progress http-agent 1", "notifications/progress http-agent 2", "  ");
            assertThat(events.get(2).at("/result/content/0/text").textValue()).startsWith("{\"token\":\"execache-lab-");
        }
    }

    @Test
    void aNonLoopbackAddressWithoutATokenIsRefusedInOneLine() throws Exception {
        HttpServeProcess refused = HttpServeProcess.run(NO_POOL, "--store", "memory", "--http", "0.0.0.0:0");

        assertThat(refused.exitCode()).isEqualTo(2);
        assertThat(refused.stderr()).filteredOn(line -> line.startsWith("execache: "))
                .singleElement().asString().contains("not a loopback address, needs a token");
    }

    @Test
    void aTokenFileOthersCanReadIsRefused() throws Exception {
        Path tokens = dir.resolve("open-tokens");
        Files.writeString(tokens, TOKEN + "\n");
        Files.setPosixFilePermissions(tokens, PosixFilePermissions.fromString("rw-r--r--"));

        HttpServeProcess refused = HttpServeProcess.run(NO_POOL, "--store", "memory", "--http", "0",
                "--http-token-file", tokens.toString());

        assertThat(refused.exitCode()).isEqualTo(2);
        assertThat(String.join("\n", refused.stderr())).contains("can be read by others", "chmod 600")
                .doesNotContain(TOKEN);
    }
}
