package dev.execache.mcp.server.stdio;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.core.CachePolicy;
import dev.execache.core.CachedExecutor;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.StoreGuard;
import dev.execache.gateway.Downstream;
import dev.execache.gateway.Gateway;
import dev.execache.gateway.GatewayPolicy;
import dev.execache.gateway.Json;
import dev.execache.gateway.ServeTools;
import dev.execache.gateway.TestDeno;
import dev.execache.mcp.server.RawMcpClient;
import dev.execache.mcp.server.ServeFixture;
import dev.execache.sandbox.DenoSandbox;
import dev.execache.sandbox.DenoSandboxSettings;
import dev.execache.store.memory.MemoryCacheStore;
import dev.execache.tools.mcp.McpToolCatalog;
import java.io.IOException;
import java.nio.channels.Channels;
import java.nio.channels.Pipe;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code execute_code} whose code calls the tests' lab server, through the stdio transport in one
 * process: the progress of the code's tool calls reaches the agent, and a run that ends during a
 * tool call (its timeout, or the client cancelling it) is answered so and cancels the call on the
 * server. Real Deno, a real downstream server; what the gateway does without a transport is in the
 * gateway module's CodeToolsTest and RunEndsDuringToolCallTest.
 */
class ExecuteCodeCallingToolsTest {
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(20);
    /** Long enough for the call to be made on a loaded machine; the call itself would take ten minutes. */
    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(5);
    private static final String SLOW_WRITE = "return await tools.lab.slow_write({ms: 600000});";
    private static DenoSandbox sandbox;

    @TempDir
    Path dir;

    private McpToolCatalog catalog;
    /** Completed when the lab server says it started a slow_write. */
    private final CompletableFuture<Void> writing = new CompletableFuture<>();
    private MemoryCacheStore store;
    private CachedExecutor executor;
    private Gateway gateway;

    @BeforeAll
    static void startSandbox() throws IOException {
        sandbox = new DenoSandbox(DenoSandboxSettings.builder().denoExecutable(TestDeno.executable()).warmPoolSize(1)
                .build());
    }

    @AfterAll
    static void closeSandbox() {
        sandbox.close();
    }

    @BeforeEach
    void startLab() {
        MutableToolVersions versions = new MutableToolVersions();
        catalog = new McpToolCatalog(List.of(Downstream.lab("lab", true)), CALL_TIMEOUT, Duration.ofHours(1), line -> {
            if (line.contains("writing in")) {
                writing.complete(null);
            }
        }, Clock.systemUTC()).start();
        store = new MemoryCacheStore(100, Clock.systemUTC());
        gateway = Gateway.builder(catalog, StoreGuard.of(store), versions,
                new GatewayPolicy(List.of(new GatewayPolicy.Server("lab", true, true)), List.of()),
                CachePolicy.DEFAULTS).build();
        executor = CachedExecutor.builder(sandbox, store).toolVersions(versions).codeTools(gateway).build();
    }

    @AfterEach
    void stopLab() {
        catalog.close();
    }

    /** What the lab server was told to cancel, once it was told (or after 15 s), and the writes it made. */
    private JsonNode cancellations() throws IOException {
        String result = catalog.call("lab__cancellations", Map.of("wait_ms", 15_000)).json();
        return Json.MAPPER.readTree(Json.MAPPER.readTree(result).at("/content/0/text").textValue());
    }

    /** serve on stdio in front of the gateway, and a raw client that has initialized it. */
    private record Served(McpStdioServer server, RawMcpClient client) implements AutoCloseable {
        @Override
        public void close() {
            server.close();
        }
    }

    private Served serve() throws IOException {
        Pipe toServer = Pipe.open();
        Pipe fromServer = Pipe.open();
        McpStdioServer server = new McpStdioServer(ServeTools.builder(executor, new ServeFixture(dir, Map.of()).serveSettings)
                .gateway(gateway).build(), "test", Channels.newInputStream(toServer.source()),
                Channels.newOutputStream(fromServer.sink()), Duration.ofSeconds(5));
        RawMcpClient client = new RawMcpClient(Channels.newOutputStream(toServer.sink()),
                Channels.newInputStream(fromServer.source()));
        try {
            client.initialize();
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
        return new Served(server, client);
    }

    @Test
    void theProgressOfCodesToolCallsReachesTheAgentUnderTheRunsTokenCountingUpInBothEras() throws IOException {
        try (Served served = serve()) {
            RawMcpClient client = served.client();
            String code = """
                    const first = await tools.lab.progress_steps({steps: 2});
                    const second = await tools.lab.progress_steps({steps: 3});
                    return [first.token !== null, second.token !== null];
                    """;

            JsonNode initializeEra = client.response(client.sendRequest("tools/call", Map.of("name", "execute_code",
                    "arguments", Map.of("code", code), "_meta", Map.of("progressToken", "run-7"))));
            JsonNode modernEra = client.response(client.sendRequest("tools/call", Map.of("name", "execute_code",
                    "arguments", Map.of("code", code), "_meta", Map.of("progressToken", 41,
                            "io.modelcontextprotocol/protocolVersion", "2026-07-28",
                            "io.modelcontextprotocol/clientCapabilities", Map.of()))));

            // each server got a token of its own, and the run was not kept (progress_steps is not cached)
            for (JsonNode answer : List.of(initializeEra, modernEra)) {
                assertThat(answer.at("/result/structuredContent/result").toString()).isEqualTo("[true,true]");
                assertThat(answer.at("/result/structuredContent/cache").textValue()).isEqualTo("miss");
            }
            List<JsonNode> progress = client.unclaimed().stream()
                    .filter(message -> "notifications/progress".equals(message.path("method").textValue())).toList();
            for (JsonNode token : List.<JsonNode>of(Json.MAPPER.valueToTree("run-7"), Json.MAPPER.valueToTree(41))) {
                List<JsonNode> ofRun = progress.stream().filter(message -> message.at("/params/progressToken")
                        .equals(token)).map(message -> message.get("params")).toList();
                // progress counts the run's notifications (a slow run's "running for N s" among them): it only grows
                List<Integer> counted = new ArrayList<>();
                for (int number = 1; number <= ofRun.size(); number++) {
                    counted.add(number);
                }
                assertThat(ofRun).extracting(step -> step.get("progress").intValue()).as("token " + token)
                        .isEqualTo(counted);
                assertThat(ofRun).allMatch(step -> !step.has("total"));
                assertThat(ofRun.stream().map(step -> step.get("message").textValue())
                        .filter(message -> !message.startsWith("running for ")).toList()).as("token " + token)
                        .containsExactly("lab__progress_steps: step 1", "lab__progress_steps: step 2",
                                "lab__progress_steps: step 1", "lab__progress_steps: step 2", "lab__progress_steps: step 3");
            }
        }
    }

    @Test
    void serveAnswersATimeoutDuringAToolCallAsTimeoutErrorAndTheServerIsToldToCancel() throws IOException {
        try (Served served = serve()) {
            RawMcpClient client = served.client();

            JsonNode result = client.callTool("execute_code", Map.of("code", SLOW_WRITE, "timeout",
                    RUN_TIMEOUT.toSeconds()));

            assertThat(result.get("isError").booleanValue()).isTrue();
            JsonNode answer = Json.MAPPER.readTree(result.at("/content/0/text").textValue());
            assertThat(answer.at("/error/type").textValue()).isEqualTo("TimeoutError");
            assertThat(answer.at("/toolCalls/0/tool").textValue()).isEqualTo("lab__slow_write");
            assertThat(answer.at("/toolCalls/0/cancelled").textValue()).isEqualTo("possibly applied");
            assertThat(store.size()).isZero();
            assertThat(cancellations().at("/cancelled/0/reason").textValue()).isEqualTo("the run that made the call ended");
        }
    }

    @Test
    void aRunTheClientCancelsDuringAToolCallCancelsTheCallOnTheServerAndStoresNothing() throws Exception {
        try (Served served = serve()) {
            RawMcpClient client = served.client();

            int id = client.sendRequest("tools/call", Map.of("name", "execute_code", "arguments",
                    Map.of("code", "return await tools.lab.slow_write({ms: 600000});")));
            writing.get();
            client.send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":"
                    + id + "}}");

            JsonNode lab = cancellations();
            assertThat(lab.at("/cancelled/0/tool").textValue()).isEqualTo("slow_write");
            assertThat(lab.at("/cancelled/0/reason").textValue()).isEqualTo("the run that made the call ended");
            assertThat(lab.get("writes").intValue()).isZero();
            assertThat(store.size()).isZero();
        }
    }
}
