package dev.execache.mcp.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.Set;

/**
 * The rights an OAuth access token can carry at {@code serve --http}, one per kind of operation, and
 * which one each request needs. A static token (and, with none configured, loopback) has all three.
 */
enum Scope {
    /** The figures (/metrics, the dashboard's data, cache_stats), the lists and descriptions of tools, resources and prompts. */
    READ("execache:read"),
    /** Running code (execute_code) and everything that reaches a downstream server: its tools, resources, prompts. */
    RUN("execache:run"),
    /** What changes the shared cache for everyone: clear_cache and invalidate_tool. */
    ADMIN("execache:admin");

    private static final Set<String> READ_TOOLS = Set.of("cache_stats", "describe_tools", "search_tools", "inspect_tool_call");
    private static final Set<String> ADMIN_TOOLS = Set.of("clear_cache", "invalidate_tool");
    private static final Set<String> LISTS = Set.of(McpSchema.METHOD_TOOLS_LIST, McpSchema.METHOD_RESOURCES_LIST,
            McpSchema.METHOD_RESOURCES_TEMPLATES_LIST, McpSchema.METHOD_PROMPT_LIST);
    private static final Set<String> DOWNSTREAM = Set.of(McpSchema.METHOD_RESOURCES_READ, McpSchema.METHOD_PROMPT_GET,
            McpSchema.METHOD_COMPLETION_COMPLETE, McpSchema.METHOD_RESOURCES_SUBSCRIBE,
            McpSchema.METHOD_RESOURCES_UNSUBSCRIBE, "tasks/get", "tasks/result", "tasks/list", "tasks/cancel",
            "tasks/update");

    private final String value;

    Scope(String value) {
        this.value = value;
    }

    /** The scope as tokens carry it. */
    String value() {
        return value;
    }

    /**
     * The scope a request needs; null when any valid token will do (the handshake: initialize,
     * server/discover, ping, logging/setLevel, and methods this server does not have, which are
     * answered as such).
     */
    static Scope neededFor(String method, JsonNode params) {
        if (McpSchema.METHOD_TOOLS_CALL.equals(method)) {
            String tool = params == null ? "" : params.path("name").asText("");
            return READ_TOOLS.contains(tool) ? READ : ADMIN_TOOLS.contains(tool) ? ADMIN : RUN;
        }
        if (LISTS.contains(method)) {
            return READ;
        }
        if (DOWNSTREAM.contains(method)) {
            return RUN;
        }
        return null;
    }
}
