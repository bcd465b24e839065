package dev.execache.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.core.ToolResult;
import dev.execache.core.spi.CatalogTool;
import dev.execache.gateway.Json;
import dev.execache.tools.mcp.McpToolCatalog;
import dev.execache.tools.mcp.UrlServerSettings;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * execache's url-server client as the official conformance suite's client scenarios drive it:
 * {@code conformance client --command "java -cp ... dev.execache.cli.ConformanceClient" --scenario S}
 * starts it with the scenario server's URL as its last argument, the scenario's name in
 * {@code MCP_CONFORMANCE_SCENARIO} and its context (client credentials) in
 * {@code MCP_CONFORMANCE_CONTEXT}. It connects the way the gateway does, lists the tools and calls
 * them, and exits 0 when every call answered. See app-cli/src/test/conformance/run.sh.
 */
public final class ConformanceClient {
    private ConformanceClient() {
    }

    public static void main(String[] args) throws Exception {
        URI url = URI.create(args[args.length - 1]);
        String scenario = System.getenv().getOrDefault("MCP_CONFORMANCE_SCENARIO", "");
        JsonNode context = Json.MAPPER.readTree(System.getenv().getOrDefault("MCP_CONFORMANCE_CONTEXT", "{}"));
        UrlServerSettings.ClientCredentials oauth = null;
        Map<String, String> environment = new HashMap<>();
        if (context.has("client_id") && context.has("client_secret")) {
            environment.put("CONFORMANCE_SECRET", context.get("client_secret").asText());
            oauth = new UrlServerSettings.ClientCredentials(context.get("client_id").asText(), "${CONFORMANCE_SECRET}",
                    context.path("scope").isTextual() ? context.get("scope").asText() : null,
                    scenario.endsWith("-post") ? "client_secret_post" : "client_secret_basic");
        }
        UrlServerSettings server = new UrlServerSettings("conformance", url, Map.of(), true, oauth, environment);
        int failed = 0;
        try (McpToolCatalog catalog = new McpToolCatalog(List.of(server), Duration.ofSeconds(20), Duration.ofHours(1),
                line -> System.err.println(line), Clock.systemUTC()).start()) {
            List<CatalogTool> tools = catalog.tools();
            System.err.println("tools: " + tools.stream().map(CatalogTool::name).toList());
            for (CatalogTool tool : tools) {
                Map<String, Object> arguments = tool.name().endsWith("__add_numbers") ? Map.of("a", 5, "b", 3) : Map.of();
                ToolResult result = catalog.call(tool.name(), arguments);
                System.err.println(tool.name() + ": " + result.json());
                failed += result.isError() ? 1 : 0;
            }
        }
        System.exit(failed == 0 ? 0 : 1);
    }
}
