package dev.execache.gateway;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.core.spi.CatalogTool;
import dev.execache.core.spi.ToolCatalog;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.Tool;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * {@code search_tools} and {@code describe_tools}: how an agent finds the servers' tools and learns their types
 * without holding every definition in its context. A bad argument is a tool error that names it.
 */
final class CodeModeTools {
    static final int DEFAULT_SEARCH_LIMIT = 10;
    /** How many of a query's best matches describe_tools describes: search_tools lists more, in a line each. */
    static final int DESCRIBED_MATCHES = 5;
    static final int MAX_LIMIT = 50;
    /** The longest summary a match shows: the first line of the description, cut at a word. */
    private static final int SUMMARY_CHARS = 160;

    private final Gateway gateway;
    /** execache's own tools' full definitions, by name. */
    private final Supplier<Map<String, Tool>> own;

    CodeModeTools(Gateway gateway, Supplier<Map<String, Tool>> own) {
        this.gateway = gateway;
        this.own = own;
    }

    CallToolResult search(Map<String, Object> arguments) {
        if (!(arguments.get("query") instanceof String query) || query.isBlank()) {
            return failure("query: give words for what the tool does, as a non-empty string");
        }
        int limit;
        try {
            limit = limit(arguments, DEFAULT_SEARCH_LIMIT);
        } catch (IllegalArgumentException e) {
            return failure(e.getMessage());
        }
        try {
            // as tools/list does: a search asked while a server starts (right after initialize, which waits only for
            // the servers' instructions) finds that server's tools
            gateway.awaitStartingServers();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return failure("execache is stopping");
        }
        ToolSearch search = gateway.toolSearch();
        ObjectNode node = Json.MAPPER.createObjectNode();
        node.put("query", query);
        node.put("tools", search.size());
        ArrayNode matches = node.putArray("matches");
        StringBuilder text = new StringBuilder();
        for (ToolSearch.Match match : search.search(query, limit)) {
            CatalogTool tool = match.tool();
            ObjectNode each = matches.addObject();
            each.put("name", tool.name());
            each.put("call", TypeScriptDeclarations.callName(tool));
            each.put("summary", summary(tool));
            each.put("signature", TypeScriptDeclarations.signature(tool));
            each.put("score", Math.round(match.score() * 1000) / 1000.0);
            text.append(each.get("call").textValue()).append(": ").append(each.get("summary").textValue())
                    .append("\n  ").append(each.get("signature").textValue()).append('\n');
        }
        if (matches.isEmpty()) {
            text.append("No tool matches '").append(query).append("' among ").append(search.size())
                    .append(" tools; try other words.");
        }
        return result(node, text.toString().strip());
    }

    CallToolResult describe(Map<String, Object> arguments) {
        if (Stream.of("names", "server", "query", "all").anyMatch(arguments::containsKey)) {
            // tools asked for are described once their servers are up, as search_tools finds them; asked for
            // nothing, it says where each server stands now
            try {
                gateway.awaitStartingServers();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return failure("execache is stopping");
            }
        }
        Map<String, CatalogTool> current = gateway.catalogTools();
        Map<String, CatalogTool> chosen = new LinkedHashMap<>();
        List<Tool> ownChosen = new ArrayList<>();
        boolean asked = false;
        if (arguments.containsKey("names")) {
            asked = true;
            if (!(arguments.get("names") instanceof List<?> names)) {
                return failure("names: must be an array of tool names (SERVER__TOOL or SERVER.TOOL), not "
                        + Json.jsonType(arguments.get("names")));
            }
            Map<String, Tool> ownTools = own.get();
            Set<String> unknown = new TreeSet<>();
            for (Object name : names) {
                if (!(name instanceof String text) || text.isBlank()) {
                    return failure("names: every item must be a non-empty tool name, not " + Json.jsonType(name));
                }
                if (ownTools.containsKey(text)) {
                    ownChosen.add(ownTools.get(text));
                    continue;
                }
                CatalogTool tool = current.get(catalogName(text));
                if (tool == null || !gateway.codeMayCall(tool.server())) {
                    unknown.add(text);
                } else {
                    chosen.put(tool.name(), tool);
                }
            }
            if (!unknown.isEmpty()) {
                return failure("names: no tool code can call is called " + String.join(", ", unknown)
                        + " (search_tools finds tools by what they do; names are SERVER__TOOL or SERVER.TOOL)");
            }
        }
        if (arguments.containsKey("server")) {
            asked = true;
            if (!(arguments.get("server") instanceof String server) || server.isBlank()) {
                return failure("server: must be a server's name, a non-empty string");
            }
            boolean known = gateway.servers().stream().anyMatch(status -> status.name().equals(server));
            if (!known) {
                return failure("server: no server is called '" + server + "' (servers: " + String.join(", ",
                        gateway.servers().stream().map(ToolCatalog.ServerStatus::name).toList()) + ")");
            }
            current.values().stream().filter(tool -> tool.server().equals(server) && gateway.codeMayCall(server))
                    .forEach(tool -> chosen.put(tool.name(), tool));
        }
        if (arguments.containsKey("query")) {
            asked = true;
            if (!(arguments.get("query") instanceof String query) || query.isBlank()) {
                return failure("query: must be words for what the tool does, a non-empty string");
            }
            gateway.toolSearch().search(query, DESCRIBED_MATCHES)
                    .forEach(match -> chosen.put(match.tool().name(), match.tool()));
        }
        if (arguments.containsKey("all")) {
            if (!(arguments.get("all") instanceof Boolean all)) {
                return failure("all: must be true or false, not " + Json.jsonType(arguments.get("all")));
            }
            if (all) {
                asked = true;
                current.values().stream().filter(tool -> gateway.codeMayCall(tool.server()))
                        .forEach(tool -> chosen.put(tool.name(), tool));
            }
        }
        return described(chosen, ownChosen, asked);
    }

    private CallToolResult described(Map<String, CatalogTool> chosen, List<Tool> ownChosen, boolean asked) {
        ObjectNode node = Json.MAPPER.createObjectNode();
        String typescript = chosen.isEmpty() ? "" : gateway.typescript(chosen.values());
        node.put("typescript", typescript);
        ArrayNode tools = node.putArray("tools");
        for (String name : new TreeSet<>(chosen.keySet())) {
            ToolCallRules.Decision decision = gateway.decision(name);
            ObjectNode tool = tools.addObject();
            tool.put("name", name);
            tool.put("cached", decision.cached());
            tool.put("why", decision.why());
            if (decision.ttl() != null) {
                tool.put("ttlSeconds", decision.ttl().toSeconds());
            }
        }
        ArrayNode servers = node.putArray("servers");
        StringBuilder text = new StringBuilder(typescript);
        StringBuilder notUp = new StringBuilder();
        for (ToolCatalog.ServerStatus server : gateway.servers()) {
            ObjectNode each = servers.addObject();
            each.put("name", server.name());
            each.put("state", server.state().name().toLowerCase(Locale.ROOT));
            each.put("tools", server.tools());
            if (server.reason() != null) {
                each.put("reason", server.reason());
            }
            if (server.state() != ToolCatalog.ServerStatus.State.UP) {
                notUp.append("\n// server ").append(server.name()).append(": ")
                        .append(server.reason() != null ? "unavailable: " + server.reason() : "still starting");
            }
        }
        if (!ownChosen.isEmpty()) {
            ArrayNode definitions = node.putArray("own");
            ownChosen.forEach(tool -> definitions.add(Json.MAPPER.valueToTree(tool)));
            text.append(text.isEmpty() ? "" : "\n").append(Json.write(definitions));
        }
        if (!asked) {
            String hint = "Name what to describe: names (SERVER__TOOL or SERVER.TOOL), server, query (search_tools "
                    + "finds tools by what they do), or all: true for every tool.";
            node.put("hint", hint);
            StringBuilder overview = new StringBuilder(hint).append("\nServers:");
            gateway.servers().forEach(server -> overview.append("\n// server ").append(server.name()).append(": ")
                    .append(server.state().name().toLowerCase(Locale.ROOT)).append(", ").append(server.tools())
                    .append(server.tools() == 1 ? " tool" : " tools"));
            text.setLength(0);
            text.append(overview);
            notUp.setLength(0);
        }
        return result(node, text.append(notUp).toString());
    }

    /** {@code SERVER.TOOL} as the catalog names it, {@code SERVER__TOOL}; any other name as it is. */
    private String catalogName(String name) {
        if (name.contains("__")) {
            return name;
        }
        String bare = name.startsWith("tools.") ? name.substring("tools.".length()) : name;
        int dot = bare.indexOf('.');
        return dot > 0 ? bare.substring(0, dot) + "__" + bare.substring(dot + 1) : name;
    }

    private static int limit(Map<String, Object> arguments, int defaultLimit) {
        Object value = arguments.get("limit");
        if (value == null) {
            return defaultLimit;
        }
        if (!(value instanceof Number number) || number.doubleValue() != Math.rint(number.doubleValue())) {
            throw new IllegalArgumentException("limit: must be a whole number from 1 to " + MAX_LIMIT + ", not "
                    + (value instanceof Number ? value : Json.jsonType(value)));
        }
        long limit = number.longValue();
        if (limit < 1 || limit > MAX_LIMIT) {
            throw new IllegalArgumentException("limit: must be from 1 to " + MAX_LIMIT + ", not " + limit);
        }
        return (int) limit;
    }

    /** The first line of the tool's description (else its title), at most {@value #SUMMARY_CHARS} characters. */
    static String summary(CatalogTool tool) {
        Object description = tool.definition().get("description");
        Object title = tool.definition().get("title");
        String text = description instanceof String said && !said.isBlank() ? said
                : title instanceof String named ? named : "";
        String line = text.strip().lines().findFirst().orElse("");
        if (line.length() <= SUMMARY_CHARS) {
            return line;
        }
        int cut = line.lastIndexOf(' ', SUMMARY_CHARS - 1);
        return line.substring(0, cut > SUMMARY_CHARS / 2 ? cut : SUMMARY_CHARS - 1) + "…";
    }

    private static CallToolResult result(ObjectNode node, String text) {
        return ServeTools.structured(node, text, false);
    }

    private static CallToolResult failure(String message) {
        return ServeTools.failure(message);
    }
}
