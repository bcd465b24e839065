package dev.execache.mcp.server.stdio;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.core.StoreGuard;
import dev.execache.core.CachePolicy;
import dev.execache.gateway.Downstream;
import dev.execache.gateway.Gateway;
import dev.execache.gateway.GatewayPolicy;
import dev.execache.gateway.ServeTools;
import dev.execache.mcp.server.ServeFixture;
import dev.execache.tools.mcp.McpServerSettings;
import dev.execache.tools.mcp.McpToolCatalog;
import dev.execache.mcp.server.RawMcpClient;
import dev.execache.core.CapturedLog;
import java.io.IOException;
import java.nio.channels.Channels;
import java.nio.channels.Pipe;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * serve with one server offered without the SERVER__ prefix ({@code prefix: false}): its tools under their own
 * names, cached as before, and a tool whose name execache's own tool has offered with the prefix instead.
 * One lab server for the class; it offers one more tool named cache_stats (LAB_EXTRA_TOOL).
 */
class UnprefixedServerTest {
    @TempDir
    static Path dir;

    private static McpToolCatalog catalog;
    private static McpStdioServer server;
    private static RawMcpClient client;
    private static final CapturedLog log = new CapturedLog();
    private static JsonNode initialized;

    @BeforeAll
    static void start() throws IOException {
        ServeFixture fixture = new ServeFixture(dir, Map.of());
        McpServerSettings lab = Downstream.lab("lab", true, Map.of("LAB_EXTRA_TOOL", "cache_stats"));
        // the lab's tools answer fast: cached all the same, to show caching under the server's own names
        GatewayPolicy policy = new GatewayPolicy(List.of(new GatewayPolicy.Server("lab", true, true, false)), List.of());
        catalog = new McpToolCatalog(List.of(lab), Duration.ofSeconds(20), Duration.ofHours(1), line -> { },
                Clock.systemUTC()).start();
        Gateway gateway = Gateway.builder(catalog, StoreGuard.of(fixture.store), fixture.versions, policy,
                CachePolicy.DEFAULTS).clock(fixture.clock).build();
        Pipe toServer = Pipe.open();
        Pipe fromServer = Pipe.open();
        server = new McpStdioServer(ServeTools.builder(fixture.executor, fixture.serveSettings).gateway(gateway)
                .build(), "test",
                Channels.newInputStream(toServer.source()), Channels.newOutputStream(fromServer.sink()),
                Duration.ofSeconds(5));
        client = new RawMcpClient(Channels.newOutputStream(toServer.sink()), Channels.newInputStream(fromServer.source()));
        initialized = client.initialize();
    }

    @AfterAll
    static void stop() {
        server.close();
        catalog.close();
        log.close();
    }

    @Test
    void theServersToolsAreOfferedUnderTheirOwnNamesAndACollidingOneKeepsThePrefix() {
        List<String> names = new ArrayList<>();
        JsonNode tools = client.request("tools/list", Map.of()).at("/result/tools");
        tools.forEach(tool -> names.add(tool.get("name").textValue()));

        assertThat(names).contains("execute_code", "get_count", "increment", "lab__cache_stats")
                .doesNotContain("lab__get_count", "lab__increment");
        assertThat(names.stream().filter("cache_stats"::equals)).as("execache's own, once").hasSize(1);
        assertThat(log.lines()).contains("server lab: its tool cache_stats is offered as lab__cache_stats, not under its"
                + " own name: execache has a tool of that name");
        for (JsonNode tool : tools) {
            if (tool.get("name").textValue().equals("cache_stats")) {
                assertThat(tool.get("description").textValue()).doesNotContain("A tool whose name the test chose");
            }
        }
    }

    @Test
    void theServersInstructionsComeAfterExecachesNamedByServerInBothEras() {
        JsonNode discovered = client.request("server/discover", Map.of()).get("result");

        for (JsonNode answer : List.of(initialized, discovered)) {
            assertThat(answer.get("instructions").textValue()).startsWith("execache runs TypeScript/JavaScript")
                    .endsWith("\n\n## Server lab\n\nThe lab counts the calls it serves.");
        }
    }

    @Test
    void anUnprefixedToolIsCalledAndCachedAsWithThePrefix() {
        JsonNode first = client.callTool("get_other", Map.of());
        JsonNode second = client.callTool("get_other", Map.of());
        JsonNode colliding = client.callTool("lab__cache_stats", Map.of());

        assertThat(first.at("/content/0/text").textValue()).isEqualTo("{\"served\":1}");
        assertThat(second.get("content")).as("answered from the cache").isEqualTo(first.get("content"));
        assertThat(first.at("/_meta/dev.execache~1cache/status").textValue()).isEqualTo("miss");
        assertThat(second.at("/_meta/dev.execache~1cache/status").textValue()).isEqualTo("hit");
        assertThat(colliding.at("/content/0/text").textValue()).isEqualTo("{\"extra\":\"cache_stats\"}");
    }
}
