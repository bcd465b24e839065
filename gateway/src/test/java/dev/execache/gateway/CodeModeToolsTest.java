package dev.execache.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.core.CachePolicy;
import dev.execache.core.CachedExecutor;
import dev.execache.core.Limits;
import dev.execache.core.MutableClock;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.ScriptedSandbox;
import dev.execache.core.SimpleStore;
import dev.execache.core.StoreGuard;
import dev.execache.core.spi.CatalogTool;
import dev.execache.core.spi.ToolCatalog.ServerStatus;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.TextContent;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** search_tools, describe_tools and what tools/list holds in code mode, over scripted servers. */
class CodeModeToolsTest {
    /** The most bytes execache's own tools may take in tools/list, together, in every mode. */
    private static final int OWN_SURFACE_LIMIT = 4096;

    private final ScriptedCatalog catalog = new ScriptedCatalog();

    private ServeTools serve(Expose expose, List<String> servers) {
        return serve(catalog, expose, servers);
    }

    private static ServeTools serve(ScriptedCatalog catalog, Expose expose, List<String> servers) {
        MutableClock clock = new MutableClock();
        Gateway gateway = servers.isEmpty() ? null : Gateway.builder(catalog, StoreGuard.of(new SimpleStore(clock)),
                new MutableToolVersions(), new GatewayPolicy(servers.stream()
                        .map(name -> new GatewayPolicy.Server(name, true, true)).toList(), List.of()),
                                CachePolicy.DEFAULTS).clock(clock).build();
        CachedExecutor executor = CachedExecutor.builder(new ScriptedSandbox(TestTools::answer), new SimpleStore(clock))
                .toolVersions(new MutableToolVersions()).clock(clock).build();
        Limits limits = Limits.DEFAULTS.withTimeout(Duration.ofSeconds(30));
        return ServeTools.builder(executor, new ServeSettings(limits, "execache.yaml",
                Json.MAPPER.createObjectNode().put("store", "memory"), expose)).gateway(gateway).build();
    }

    private static CatalogTool tool(String server, String name, String description) {
        return ScriptedCatalog.tool(server, name, Map.of("description", description, "inputSchema", Map.of(
                "type", "object", "properties", Map.of("path", Map.of("type", "string", "description", "Where.")),
                "required", List.of("path"))));
    }

    /** tools/list as the transports write it: every listed tool's definition. */
    private static List<JsonNode> listed(ServeTools tools) {
        List<JsonNode> list = new ArrayList<>();
        tools.specifications().stream().filter(spec -> tools.lists(spec.tool().name()))
                .forEach(spec -> list.add(Json.MAPPER.valueToTree(spec.tool())));
        return list;
    }

    private static int bytes(List<JsonNode> tools) {
        return Json.write(Json.MAPPER.valueToTree(Map.of("tools", tools))).getBytes(StandardCharsets.UTF_8).length;
    }

    private static CallToolResult call(ServeTools tools, String name, Map<String, Object> arguments) {
        return tools.specifications().stream().filter(spec -> spec.tool().name().equals(name)).findFirst().orElseThrow()
                .call(CallToolRequest.builder(name).arguments(arguments).build(), RequestOrigin.UNKNOWN);
    }

    private static String text(CallToolResult result) {
        return ((TextContent) result.content().get(0)).text();
    }

    private static JsonNode structured(CallToolResult result) {
        return Json.MAPPER.valueToTree(result.structuredContent());
    }

    private void offerManyServers(int servers, int toolsEach) {
        List<CatalogTool> tools = new ArrayList<>();
        List<ServerStatus> statuses = new ArrayList<>();
        for (int s = 0; s < servers; s++) {
            for (int t = 0; t < toolsEach; t++) {
                tools.add(tool("s" + s, "tool_" + t, "Does the thing number " + t + " of server " + s
                        + ", described at some length as real servers do. ".repeat(5)));
            }
            statuses.add(new ServerStatus("s" + s, ServerStatus.State.UP, null, toolsEach));
        }
        catalog.servers = statuses;
        catalog.offer(tools);
    }

    /** A server, docs, still starting: it comes up (with read_file) when something waits for it. */
    private static ScriptedCatalog docsStarting() {
        ScriptedCatalog starting = new ScriptedCatalog() {
            @Override
            public void awaitStart(String server) {
                super.awaitStart(server);
                servers = List.of(new ServerStatus("docs", ServerStatus.State.UP, null, 1));
                offer(List.of(CodeModeToolsTest.tool("docs", "read_file", "Reads a file of the docs.")));
            }
        };
        starting.servers = List.of(new ServerStatus("docs", ServerStatus.State.STARTING, null, 0));
        return starting;
    }

    @Test
    void aSearchAskedWhileAServerStartsWaitsForItAndFindsItsTools() {
        ScriptedCatalog starting = docsStarting();
        ServeTools tools = serve(starting, Expose.CODE, List.of("docs"));

        JsonNode found = structured(call(tools, "search_tools", Map.of("query", "read a file")));

        assertThat(starting.awaited).containsExactly("docs");
        assertThat(found.get("matches").findValuesAsText("name")).containsExactly("docs__read_file");
    }

    @Test
    void describingToolsWaitsForTheServersStillStartingDescribingWhereServersStandDoesNot() {
        ScriptedCatalog starting = docsStarting();
        ServeTools tools = serve(starting, Expose.CODE, List.of("docs"));

        JsonNode standing = structured(call(tools, "describe_tools", Map.of()));
        assertThat(starting.awaited).isEmpty();
        assertThat(standing.get("servers").get(0).get("state").textValue()).isEqualTo("starting");

        JsonNode described = structured(call(tools, "describe_tools", Map.of("names", List.of("docs__read_file"))));
        assertThat(starting.awaited).containsExactly("docs");
        assertThat(described.get("tools").findValuesAsText("name")).containsExactly("docs__read_file");
    }

    @Test
    void inCodeModeToolsListIsTheSameSizeWithOneServerAsWithMany() {
        offerManyServers(1, 3);
        List<JsonNode> one = listed(serve(Expose.CODE, List.of("s0")));
        List<String> many = new ArrayList<>();
        for (int s = 0; s < 8; s++) {
            many.add("s" + s);
        }
        offerManyServers(8, 40);
        ServeTools tools = serve(Expose.CODE, many);

        assertThat(bytes(listed(tools))).isEqualTo(bytes(one));
        assertThat(listed(tools)).extracting(tool -> tool.get("name").textValue()).containsExactly("execute_code",
                "cache_stats", "invalidate_tool", "clear_cache", "search_tools", "describe_tools", "inspect_tool_call");
        assertThat(tools.specifications()).as("every server's tool stays callable by name")
                .anyMatch(spec -> spec.tool().name().equals("s7__tool_39"));
        assertThat(listed(serve(Expose.ALL, many))).hasSize(7 + 8 * 40);
    }

    @Test
    void execachesOwnToolsTakeAtMostFourKilobytesOfToolsListInEveryMode() {
        offerManyServers(2, 2);
        List<JsonNode> code = listed(serve(Expose.CODE, List.of("s0", "s1")));
        List<JsonNode> all = listed(serve(Expose.ALL, List.of("s0", "s1"))).stream()
                .filter(tool -> !tool.get("name").textValue().contains("__")).toList();
        List<JsonNode> alone = listed(serve(Expose.ALL, List.of()));

        System.out.printf("measured: execache's own tools in tools/list: %d bytes (%d tools); without servers %d bytes%n",
                bytes(code), code.size(), bytes(alone));
        assertThat(bytes(code)).isLessThanOrEqualTo(OWN_SURFACE_LIMIT);
        assertThat(bytes(all)).isEqualTo(bytes(code));
        assertThat(bytes(alone)).isLessThanOrEqualTo(OWN_SURFACE_LIMIT);
    }

    @Test
    void describeToolsGivesTheFullContractOfExecachesOwnTools() {
        offerManyServers(1, 1);
        ServeTools tools = serve(Expose.CODE, List.of("s0"));

        JsonNode own = structured(call(tools, "describe_tools", Map.of("names", List.of("execute_code", "cache_stats",
                "invalidate_tool", "clear_cache", "search_tools", "describe_tools", "inspect_tool_call")))).get("own");

        assertThat(own).hasSize(7).allSatisfy(tool -> {
            assertThat(tool.path("outputSchema").isObject()).as(tool.get("name").textValue()).isTrue();
            assertThat(tool.path("description").textValue().length()).isGreaterThan(100);
        });
        assertThat(own.get(0).at("/inputSchema/properties/cache_control/pattern").isTextual()).isTrue();
        assertThat(own.get(0).at("/outputSchema/properties/contextKeptOut").isObject()).isTrue();
    }

    @Test
    void aToolOfAServerThatJoinedAMomentAgoIsFoundAtOnce() {
        catalog.servers = List.of(new ServerStatus("fs", ServerStatus.State.UP, null, 1),
                new ServerStatus("github", ServerStatus.State.STARTING, null, 0));
        catalog.offer(List.of(tool("fs", "read_file", "Reads a file.")));
        ServeTools tools = serve(Expose.CODE, List.of("fs", "github"));
        assertThat(structured(call(tools, "search_tools", Map.of("query", "pull requests"))).get("matches")).isEmpty();

        catalog.offer(List.of(tool("fs", "read_file", "Reads a file."),
                tool("github", "list_pull_requests", "Lists the pull requests of a repository.")));
        CallToolResult found = call(tools, "search_tools", Map.of("query", "pull requests", "limit", 1));

        JsonNode match = structured(found).get("matches").get(0);
        assertThat(structured(found).get("matches")).hasSize(1);
        assertThat(match.get("name").textValue()).isEqualTo("github__list_pull_requests");
        assertThat(match.get("call").textValue()).isEqualTo("tools.github.list_pull_requests");
        assertThat(match.get("summary").textValue()).isEqualTo("Lists the pull requests of a repository.");
        assertThat(match.get("signature").textValue())
                .isEqualTo("list_pull_requests(args: {path: string}): Promise<unknown>");
        assertThat(text(found)).startsWith("tools.github.list_pull_requests: Lists the pull requests");
    }

    @Test
    void describeToolsOfOneNameGivesThatToolAloneWithItsParametersDocsAndResultType() {
        catalog.servers = List.of(new ServerStatus("fs", ServerStatus.State.UP, null, 2));
        catalog.offer(List.of(tool("fs", "read_file", "Reads a file."), ScriptedCatalog.tool("fs", "stat",
                Map.of("description", "A file's facts.", "outputSchema", Map.of("type", "object",
                        "properties", Map.of("size", Map.of("type", "integer")), "required", List.of("size"))))));
        ServeTools tools = serve(Expose.CODE, List.of("fs"));

        JsonNode byDots = structured(call(tools, "describe_tools", Map.of("names", List.of("fs.stat"))));
        JsonNode byPrefix = structured(call(tools, "describe_tools", Map.of("names", List.of("fs__read_file"))));

        assertThat(byDots.get("typescript").textValue()).contains("stat(args?: {").contains("Promise<{\n")
                .contains("size: number;").doesNotContain("read_file");
        assertThat(byDots.get("tools")).extracting(tool -> tool.get("name").textValue()).containsExactly("fs__stat");
        assertThat(byPrefix.get("typescript").textValue()).contains("read_file(args: {").contains("* Where.")
                .contains("path: string;").doesNotContain("stat(");
    }

    @Test
    void describeToolsNamesWhatItDoesNotKnowAndGivesTheCatalogueOnlyWhenAskedForAll() {
        catalog.servers = List.of(new ServerStatus("fs", ServerStatus.State.UP, null, 1));
        catalog.offer(List.of(tool("fs", "read_file", "Reads a file.")));
        ServeTools tools = serve(Expose.CODE, List.of("fs"));

        CallToolResult unknown = call(tools, "describe_tools", Map.of("names", List.of("fs.nope", "fs__read_file", "zz")));
        CallToolResult nothing = call(tools, "describe_tools", Map.of());
        CallToolResult all = call(tools, "describe_tools", Map.of("all", true));
        CallToolResult server = call(tools, "describe_tools", Map.of("server", "nobody"));

        assertThat(unknown.isError()).isTrue();
        assertThat(text(unknown)).startsWith("names: no tool code can call is called fs.nope, zz");
        assertThat(nothing.isError()).isFalse();
        assertThat(structured(nothing).get("typescript").textValue()).isEmpty();
        assertThat(structured(nothing).get("hint").textValue()).contains("all: true");
        assertThat(structured(nothing).get("servers").get(0).get("name").textValue()).isEqualTo("fs");
        assertThat(structured(all).get("typescript").textValue()).contains("read_file(");
        assertThat(server.isError()).isTrue();
        assertThat(text(server)).contains("no server is called 'nobody'");
    }

    @Test
    void aBadArgumentIsAToolErrorThatNamesIt() {
        catalog.offer(List.of(tool("fs", "read_file", "Reads a file.")));
        ServeTools tools = serve(Expose.CODE, List.of("fs"));

        assertThat(text(call(tools, "search_tools", Map.of()))).startsWith("query:");
        assertThat(text(call(tools, "search_tools", Map.of("query", " ")))).startsWith("query:");
        assertThat(text(call(tools, "search_tools", Map.of("query", "file", "limit", 0)))).startsWith("limit:");
        assertThat(text(call(tools, "search_tools", Map.of("query", "file", "limit", 2.5)))).startsWith("limit:");
        assertThat(text(call(tools, "search_tools", Map.of("query", "file", "limit", "3")))).startsWith("limit:");
        assertThat(text(call(tools, "search_tools", Map.of("query", "file", "top", 3)))).startsWith("top: not an argument");
        assertThat(text(call(tools, "describe_tools", Map.of("names", "fs__read_file")))).startsWith("names:");
        assertThat(text(call(tools, "describe_tools", Map.of("all", "yes")))).startsWith("all:");
        assertThat(text(call(tools, "describe_tools", Map.of("limit", 3)))).startsWith("limit:");
    }

    @Test
    void inAllModeEveryServersToolIsListedAndInCodeModeNone() {
        catalog.offer(List.of(tool("fs", "read_file", "Reads a file.")));

        assertThat(serve(Expose.ALL, List.of("fs")).lists("fs__read_file")).isTrue();
        assertThat(serve(Expose.CODE, List.of("fs")).lists("fs__read_file")).isFalse();
        assertThat(serve(Expose.CODE, List.of("fs")).lists("execute_code")).isTrue();
        assertThat(serve(Expose.CODE, List.of("fs")).listsServersTools()).isFalse();
    }
}
