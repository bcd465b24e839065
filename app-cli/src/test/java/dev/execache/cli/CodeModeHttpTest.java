package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.gateway.Downstream;
import dev.execache.cli.settings.GatewayConfig;
import dev.execache.core.CachePolicy;
import dev.execache.core.StoreGuard;
import dev.execache.gateway.Expose;
import dev.execache.gateway.Gateway;
import dev.execache.gateway.ServeTools;
import dev.execache.mcp.server.RawHttp;
import dev.execache.mcp.server.http.HttpServeSettings;
import dev.execache.mcp.server.http.McpHttpServer;
import dev.execache.tools.mcp.McpToolCatalog;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** serve --http in code mode with a real server behind it: the list is execache's own, the server's tools reachable. */
class CodeModeHttpTest {
    @TempDir
    static Path dir;

    private static McpToolCatalog catalog;
    private static McpHttpServer server;

    @BeforeAll
    static void start() throws Exception {
        ServeFixture fixture = new ServeFixture(dir, Map.of());
        GatewayConfig config = new GatewayConfig(List.of(new GatewayConfig.Server(Downstream.lab("lab", true), false)),
                List.of(), Duration.ofHours(1));
        catalog = new McpToolCatalog(List.of(Downstream.lab("lab", true)), Duration.ofSeconds(60), Duration.ofHours(1),
                line -> { }, Clock.systemUTC()).start();
        Gateway gateway = Gateway.builder(catalog, StoreGuard.of(fixture.store), fixture.versions,
                config.policy(CachePolicy.DEFAULTS), CachePolicy.DEFAULTS).clock(fixture.clock).build();
        gateway.awaitStartingServers();
        server = new McpHttpServer(ServeTools.builder(fixture.executor, fixture.serveSettings.withExpose(Expose.CODE))
                .gateway(gateway).build(), "test", HttpServeSettings.of(InetAddress.getLoopbackAddress(), 0, List.of(),
                Set.of(),
                Duration.ofSeconds(5)).withLimits(1 << 20, 16, Duration.ofSeconds(30))).start();
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
        if (catalog != null) {
            catalog.close();
        }
    }

    private static JsonNode post(String method, String params) throws IOException {
        RawHttp.Answer answer = RawHttp.post(server.port(), "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"" + method
                + "\",\"params\":" + params + "}", Map.of("Accept", "application/json"));
        assertThat(answer.status()).as(answer.body()).isEqualTo(200);
        return answer.json();
    }

    @Test
    void toolsListHoldsExecachesOwnToolsAndTheServersToolIsFoundAndStillCallableByName() throws IOException {
        List<String> names = new ArrayList<>();
        post("tools/list", "{}").at("/result/tools").forEach(tool -> names.add(tool.get("name").textValue()));
        JsonNode found = post("tools/call", "{\"name\":\"search_tools\",\"arguments\":{\"query\":\"counter\"}}");
        JsonNode called = post("tools/call", "{\"name\":\"lab__get_count\",\"arguments\":{\"who\":\"http\"}}");

        assertThat(names).containsExactly("execute_code", "cache_stats", "invalidate_tool", "clear_cache", "search_tools",
                "describe_tools", "inspect_tool_call");
        assertThat(found.at("/result/structuredContent/matches").findValuesAsText("call"))
                .contains("tools.lab.get_count");
        assertThat(called.at("/result/isError").asBoolean()).as(called.toString()).isFalse();
        assertThat(called.at("/result/content/0/text").textValue()).contains("\"who\":\"http\"");
    }
}
