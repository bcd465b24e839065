package dev.execache.mcp.server.stdio;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.gateway.Downstream;
import dev.execache.gateway.Gateway;
import dev.execache.gateway.GatewayPolicy;
import dev.execache.gateway.Json;
import dev.execache.gateway.ServeTools;
import dev.execache.core.StoreGuard;
import dev.execache.core.CachePolicy;
import dev.execache.gateway.TestTools;
import dev.execache.mcp.server.ServeFixture;
import dev.execache.tools.mcp.McpToolCatalog;
import dev.execache.mcp.server.RawMcpClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.channels.Pipe;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** serve with a downstream server: its tools beside execache's own, called through, list changes sent on. */
class ServeGatewayTest {
    @TempDir
    Path dir;

    private ServeFixture fixture;
    private McpToolCatalog catalog;
    private McpStdioServer server;
    private RawMcpClient client;
    private Gateway gateway;
    private final List<String> serverLines = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() throws IOException {
        fixture = new ServeFixture(dir, Map.of());
        GatewayPolicy policy = new GatewayPolicy(List.of(new GatewayPolicy.Server("lab", false, true)), List.of());
        catalog = new McpToolCatalog(List.of(Downstream.lab("lab", true)), Duration.ofSeconds(20), Duration.ofHours(1),
                serverLines::add, Clock.systemUTC()).start();
        gateway = Gateway.builder(catalog, StoreGuard.of(fixture.store), fixture.versions, policy,
                CachePolicy.DEFAULTS).clock(fixture.clock).build();
        Pipe toServer = Pipe.open();
        Pipe fromServer = Pipe.open();
        server = new McpStdioServer(ServeTools.builder(fixture.executor, fixture.serveSettings).gateway(gateway).build(),
                "test",
                Channels.newInputStream(toServer.source()), Channels.newOutputStream(fromServer.sink()),
                Duration.ofSeconds(5));
        client = new RawMcpClient(Channels.newOutputStream(toServer.sink()), Channels.newInputStream(fromServer.source()));
    }

    @AfterEach
    void stop() {
        server.close();
        catalog.close();
    }

    private List<String> toolNames() {
        List<String> names = new ArrayList<>();
        client.request("tools/list", Map.of()).at("/result/tools").forEach(tool -> names.add(tool.get("name").textValue()));
        return names;
    }

    @Test
    void toolsListIsExecachesToolsAndTheGatewayOnesWithTheirAnnotations() {
        JsonNode init = client.initialize();

        assertThat(init.at("/capabilities/tools/listChanged").booleanValue()).isTrue();
        assertThat(toolNames()).contains("execute_code", "clear_cache", "lab__get_count", "lab__increment");
        JsonNode tools = client.request("tools/list", Map.of()).at("/result/tools");
        for (JsonNode tool : tools) {
            if (tool.get("name").textValue().equals("lab__get_count")) {
                assertThat(tool.get("description").textValue()).isEqualTo("The counter.");
                assertThat(tool.at("/annotations/readOnlyHint").booleanValue()).isTrue();
                assertThat(tool.at("/inputSchema/properties/who/type").textValue()).isEqualTo("string");
            }
        }
    }

    @Test
    void aGatewayReadIsCachedAndAnsweredAsTheServerGaveIt() {
        client.initialize();

        JsonNode first = client.callTool("lab__get_count", Map.of("who", "x"));
        JsonNode second = client.callTool("lab__get_count", Map.of("who", "x"));

        assertThat(first.at("/content/0/text").textValue()).contains("\"served\":1");
        assertThat(second.get("content")).isEqualTo(first.get("content"));
        assertThat(first.at("/_meta/dev.execache~1cache/status").textValue()).isEqualTo("miss");
        assertThat(second.at("/_meta/dev.execache~1cache/status").textValue()).isEqualTo("hit");
        assertThat(second.at("/_meta/dev.execache~1cache/freshForSeconds").asLong()).isEqualTo(300);
    }

    @Test
    void hitsOfOneToolWithOtherArgumentsInTurnAreEachTheirOwnAnswer() {
        client.initialize();

        JsonNode x = client.callTool("lab__get_count", Map.of("who", "x"));
        JsonNode y = client.callTool("lab__get_count", Map.of("who", "y"));
        JsonNode xAgain = client.callTool("lab__get_count", Map.of("who", "x"));
        JsonNode yAgain = client.callTool("lab__get_count", Map.of("who", "y"));
        JsonNode yThird = client.callTool("lab__get_count", Map.of("who", "y"));

        assertThat(x.at("/content/0/text").textValue()).contains("\"who\":\"x\"");
        assertThat(y.at("/content/0/text").textValue()).contains("\"who\":\"y\"");
        assertThat(xAgain.get("content")).isEqualTo(x.get("content"));
        assertThat(yAgain.get("content")).isEqualTo(y.get("content"));
        assertThat(yThird.get("content")).isEqualTo(y.get("content"));
        assertThat(yThird.at("/_meta/dev.execache~1cache/status").textValue()).isEqualTo("hit");
    }

    @Test
    void aDownstreamListChangeIsSentToTheClient() throws InterruptedException {
        client.initialize();
        toolNames();

        client.callTool("lab__set_description", Map.of("tool", "get_other", "description", "Changed.", "notify", true));

        Downstream.await("notifications/tools/list_changed from execache", Duration.ofSeconds(20),
                () -> client.unclaimed().stream().anyMatch(message -> message.has("method")
                        && message.get("method").textValue().equals("notifications/tools/list_changed")));
        JsonNode tools = client.request("tools/list", Map.of()).at("/result/tools");
        boolean changed = false;
        for (JsonNode tool : tools) {
            if (tool.get("name").textValue().equals("lab__get_other")) {
                changed = tool.get("description").textValue().equals("Changed.");
            }
        }
        assertThat(changed).isTrue();
    }

    @Test
    void describeToolsGivesTypeScriptDeclarationsOfTheToolsCodeCanCall() {
        client.initialize();

        assertThat(toolNames()).contains("describe_tools");
        JsonNode result = client.callTool("describe_tools", Map.of("all", true));

        String typescript = result.at("/structuredContent/typescript").textValue();
        assertThat(typescript).startsWith("/** The tools code can call through execache")
                .contains("declare const tools: {\n  lab: {\n")
                .contains("    /**\n     * The counter.\n     */\n    get_count(args?: {\n")
                .contains("      who?: string;\n");
        assertThat(result.at("/content/0/text").textValue()).isEqualTo(typescript);
    }

    @Test
    void executeCodeSaysWhichToolCallsTheRunMadeAndWhyItWasNotStored() {
        client.initialize();

        JsonNode result = client.callTool("execute_code", Map.of("code", TestTools.TWO));

        assertThat(result.at("/structuredContent/toolCalls").isArray()).isTrue();
        assertThat(result.at("/structuredContent/toolCalls")).isEmpty();
        assertThat(result.at("/structuredContent/notStored").isNull()).isTrue();
        assertThat(result.at("/structuredContent/nondeterminism")).isEmpty();
    }

    @Test
    void inspectToolCallGivesAgeTtlLeftAndHitsOfOneCallWithoutCountingAHit() {
        client.initialize();
        JsonNode before = client.callTool("inspect_tool_call", Map.of("tool", "lab__get_count",
                "arguments", Map.of("who", "x")));
        client.callTool("lab__get_count", Map.of("who", "x"));
        client.callTool("lab__get_count", Map.of("who", "x"));
        fixture.clock.advance(Duration.ofSeconds(40));

        JsonNode inspected = client.callTool("inspect_tool_call", Map.of("tool", "lab__get_count",
                "arguments", Map.of("who", "x")));
        JsonNode again = client.callTool("inspect_tool_call", Map.of("tool", "lab__get_count",
                "arguments", Map.of("who", "x")));

        assertThat(before.at("/structuredContent/cached").booleanValue()).isFalse();
        assertThat(inspected.at("/structuredContent/cached").booleanValue()).isTrue();
        assertThat(inspected.at("/structuredContent/ageSeconds").doubleValue()).isEqualTo(40.0);
        assertThat(inspected.at("/structuredContent/ttlLeftSeconds").doubleValue())
                .isEqualTo(CachePolicy.DEFAULT_TTL.toSeconds() - 40.0);
        assertThat(inspected.at("/structuredContent/hits").intValue()).isEqualTo(1);
        assertThat(again.at("/structuredContent/hits").intValue()).as("inspecting counts no hit").isEqualTo(1);
        assertThat(inspected.at("/structuredContent/key").textValue()).startsWith("v1:");
    }

    @Test
    void inspectToolCallNamesAnUnknownTool() {
        client.initialize();

        JsonNode result = client.callTool("inspect_tool_call", Map.of("tool", "lab__nope"));

        assertThat(result.get("isError").booleanValue()).isTrue();
        assertThat(result.at("/content/0/text").textValue()).contains("no gateway tool is called 'lab__nope'")
                .contains("lab__get_count");
    }

    @Test
    void clearCacheByAGlobOnToolNamesRemovesOnlyThoseToolsCachedCalls() {
        client.initialize();
        client.callTool("lab__get_count", Map.of("who", "x"));
        client.callTool("lab__get_count", Map.of("who", "y"));
        client.callTool("lab__get_other", Map.of());

        JsonNode cleared = client.callTool("clear_cache", Map.of("tool", "lab__get_c*"));
        JsonNode count = client.callTool("lab__get_count", Map.of("who", "x"));
        JsonNode other = client.callTool("lab__get_other", Map.of());
        JsonNode both = client.callTool("clear_cache", Map.of("tool", "lab__*", "pattern", "v1:*"));

        assertThat(cleared.at("/structuredContent/removed").intValue()).isEqualTo(2);
        assertThat(cleared.at("/structuredContent/tool").textValue()).isEqualTo("lab__get_c*");
        assertThat(count.at("/content/0/text").textValue()).as("called again").contains("\"served\":3");
        assertThat(other.at("/content/0/text").textValue()).as("still cached").contains("\"served\":1");
        assertThat(both.get("isError").booleanValue()).isTrue();
        assertThat(both.at("/content/0/text").textValue()).contains("not both");
    }

    @Test
    void aHitOfARunThatUsedMathRandomSaysTheStoredResultIsNondeterministic() {
        client.initialize();
        String code = TestTools.RANDOM;

        JsonNode first = client.callTool("execute_code", Map.of("code", code));
        JsonNode hit = client.callTool("execute_code", Map.of("code", code));

        assertThat(first.at("/structuredContent/nondeterminism").toString()).isEqualTo("[\"Math.random\"]");
        assertThat(hit.at("/structuredContent/hit").booleanValue()).isTrue();
        assertThat(hit.at("/structuredContent/nondeterminism").toString()).isEqualTo("[\"Math.random\"]");
    }

    @Test
    void aCancelledReadIsCancelledOnTheServerAndItsAnswerIsNeitherSentNorStored() throws Exception {
        client.initialize();
        Map<String, Object> slow = Map.of("ms", 600_000);
        int id = client.sendRequest("tools/call", Map.of("name", "lab__sleep", "arguments", slow));
        Downstream.await("the lab server to start the slow read", Duration.ofSeconds(20),
                () -> serverLines.contains("lab: sleeping 600000 ms"));

        client.send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":" + id
                + ",\"reason\":\"the user stopped it\"}}");

        String told = catalog.call("lab__cancellations", Map.of("wait_ms", 15_000)).json();
        JsonNode server = Json.MAPPER.readTree(Json.MAPPER.readTree(told).at("/content/0/text").textValue());
        assertThat(server.at("/cancelled/0/tool").textValue()).isEqualTo("sleep");
        assertThat(gateway.inspect("lab__sleep", slow).info()).as("a cancelled read is not stored").isEmpty();
        client.request("ping", Map.of());
        assertThat(client.unclaimed()).noneMatch(message -> message.path("id").asInt(-1) == id);
    }

    @Test
    void theAgentsLogLevelReachesTheServerAndItsMessagesComeBackTaggedWithItsName() throws Exception {
        client.initialize();

        client.request("logging/setLevel", Map.of("level", "info"));
        Downstream.await("the lab server to be asked to log from info", Duration.ofSeconds(20),
                () -> labJson("lab__log_levels").get("levels").toString().equals("[\"info\"]"));
        client.callTool("lab__log", Map.of("level", "warning", "logger", "db", "data", Map.of("rows", 3, "table", "t")));
        client.callTool("lab__log", Map.of("level", "error", "data", "plain"));
        Downstream.await("two log messages of lab", Duration.ofSeconds(20), () -> labLogs().size() >= 2);

        List<JsonNode> logs = labLogs();
        assertThat(logs).extracting(message -> message.at("/params/logger").textValue()).containsExactly("lab/db", "lab");
        assertThat(logs).extracting(message -> message.at("/params/level").textValue()).containsExactly("warning", "error");
        assertThat(logs.get(0).at("/params/data")).as("data of any JSON shape, unchanged")
                .isEqualTo(Json.MAPPER.valueToTree(Map.of("rows", 3, "table", "t")));
        assertThat(logs.get(1).at("/params/data").textValue()).isEqualTo("plain");
    }

    @Test
    void aServersLogMessagesReachOnlyAnAgentThatSetALevel() throws Exception {
        client.initialize();

        client.callTool("lab__log", Map.of("level", "error", "data", "before any level"));
        client.request("logging/setLevel", Map.of("level", "error"));
        client.callTool("lab__log", Map.of("level", "error", "data", "asked"));
        // the server's messages come on one pipe, in order: once the second is in, the first was decided
        Downstream.await("the log message sent after the level was set", Duration.ofSeconds(20),
                () -> !labLogs().isEmpty());

        assertThat(labLogs()).extracting(message -> message.at("/params/data").textValue()).containsExactly("asked");
    }

    /** The notifications/message of the lab server that reached the client so far. */
    private List<JsonNode> labLogs() {
        return client.unclaimed().stream()
                .filter(message -> "notifications/message".equals(message.path("method").textValue())
                        && message.at("/params/logger").asText().startsWith("lab"))
                .toList();
    }

    /** What a lab tool answers, called directly on the server (not through serve). */
    private JsonNode labJson(String tool) {
        try {
            String answer = catalog.call(tool, Map.of()).json();
            return Json.MAPPER.readTree(Json.MAPPER.readTree(answer).at("/content/0/text").textValue());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void theAgentsProgressTokenReachesTheServerAndItsProgressComesBackUnderThatToken() {
        client.initialize();

        int id = client.sendRequest("tools/call", Map.of("name", "lab__progress_steps", "arguments", Map.of("steps", 3),
                "_meta", Map.of("progressToken", "agent-7")));
        JsonNode answer = client.response(id);

        List<JsonNode> progress = client.unclaimed().stream()
                .filter(message -> "notifications/progress".equals(message.path("method").textValue())).toList();
        assertThat(answer.at("/result/content/0/text").textValue()).as("the server got a token of its own")
                .startsWith("{\"token\":\"").doesNotContain("agent-7");
        assertThat(progress).extracting(message -> message.at("/params/progressToken").textValue())
                .containsExactly("agent-7", "agent-7", "agent-7");
        assertThat(progress).extracting(message -> message.at("/params/progress").intValue()).containsExactly(1, 2, 3);
        assertThat(progress).extracting(message -> message.at("/params/message").textValue())
                .containsExactly("step 1", "step 2", "step 3");
        assertThat(progress.get(0).at("/params/total").intValue()).isEqualTo(3);
    }

    @Test
    void aCallOfThe20260728EraGetsTheServersProgressUnderItsTokenToo() {
        client.initialize();

        int id = client.sendRequest("tools/call", Map.of("name", "lab__progress_steps", "arguments", Map.of("steps", 2),
                "_meta", Map.of("progressToken", 41, "io.modelcontextprotocol/protocolVersion", "2026-07-28",
                        "io.modelcontextprotocol/clientCapabilities", Map.of())));
        JsonNode answer = client.response(id);

        List<JsonNode> progress = client.unclaimed().stream()
                .filter(message -> "notifications/progress".equals(message.path("method").textValue())).toList();
        assertThat(answer.at("/result/resultType").textValue()).isEqualTo("complete");
        assertThat(progress).extracting(message -> message.at("/params/progressToken").intValue()).containsExactly(41, 41);
        assertThat(progress).extracting(message -> message.at("/params/progress").intValue()).containsExactly(1, 2);
    }
}
