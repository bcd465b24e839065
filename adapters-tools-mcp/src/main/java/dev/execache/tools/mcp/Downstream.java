package dev.execache.tools.mcp;

import dev.execache.core.ToolResult;
import dev.execache.core.spi.CatalogTool;
import dev.execache.core.spi.Telemetry;
import dev.execache.core.spi.ToolCatalog;
import io.modelcontextprotocol.spec.McpSchema;
import dev.execache.core.spi.ServerRefusedException;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/** One downstream server as the catalog sees it, however it is reached. */
abstract class Downstream {
    /** Where the trace context a call carries to the server comes from (the catalog's call span is current). */
    volatile Telemetry telemetry = Telemetry.NONE;

    /** How the server is reached, as {@code network.transport} names it: {@code pipe} or {@code tcp}. */
    abstract String transport();

    abstract String name();

    /** The tools it offered when it was last asked. */
    abstract List<CatalogTool> tools();

    /** Reaches the server and lists its tools; on failure, tries again later with backoff. Returns whether it is up. */
    abstract boolean connect();

    /** Lists the tools again; tells the catalog when they changed. */
    abstract void refresh();

    /** {@link #refresh}, logging a failure instead of throwing it. */
    abstract void refreshQuietly();

    /** The periodic re-discovery ({@code rediscover_seconds}); a server that says how long its list lives may skip it. */
    void rediscover() {
        refreshQuietly();
    }

    abstract ToolResult call(String tool, Map<String, Object> args);

    /** Starting, up or unavailable (and why), now. */
    abstract ToolCatalog.ServerStatus status();

    /** Waits while a start is in progress, at most as long as a start may take. */
    abstract void awaitStart() throws InterruptedException;

    /** Waits while a start is in progress and the server has not yet answered {@code initialize}; by default, as {@link #awaitStart}. */
    void awaitIntroduction() throws InterruptedException {
        awaitStart();
    }
    /** As {@link #call(String, Map)}, passing the server's progress of this call on (see {@code ToolCatalog}). */
    abstract ToolResult call(String tool, Map<String, Object> args, Consumer<Map<String, Object>> progress);

    /** As {@link #call(String, Map, Consumer)} ({@code progress} may be null), relaying the server's requests to {@code agent}. */
    abstract ToolResult call(String tool, Map<String, Object> args, Consumer<Map<String, Object>> progress,
            ToolCatalog.Agent agent);

    /** The agent for the server's requests outside any call (see {@code ToolCatalog#setSessionAgent}). */
    void setSessionAgent(ToolCatalog.Agent agent) {
    }

    /** Tells the server the agent's roots changed. */
    void rootsChanged() {
    }

    /** Asks the server to log from {@code level} up, now and whenever it connects again; a server that does not log is not asked. */
    abstract void setLogLevel(McpSchema.LoggingLevel level);

    /** Which of resources, prompts, completions and tasks (see {@link #tasksFeature}) the server declared when it connected. */
    abstract Set<String> features();

    /** A request other than a tool call, one of {@link #ASKABLE} (see {@code ToolCatalog#ask}). */
    abstract String ask(String method, String params);

    /** As {@link #ask(String, String)}, the server's requests to the agent going to {@code agent} (null: nobody). */
    String ask(String method, String params, ToolCatalog.Agent agent) {
        return ask(method, params);
    }

    /** Whether the server is up and did not list the tool {@code own} (its own name; see {@code ToolCatalog#unlisted}). */
    abstract boolean unlisted(String own);

    /** The requests other than tool calls that are passed on to a server. */
    static final Set<String> ASKABLE = Set.of(McpSchema.METHOD_RESOURCES_LIST, McpSchema.METHOD_RESOURCES_TEMPLATES_LIST,
            McpSchema.METHOD_RESOURCES_READ, McpSchema.METHOD_PROMPT_LIST, McpSchema.METHOD_PROMPT_GET,
            McpSchema.METHOD_COMPLETION_COMPLETE, McpSchema.METHOD_RESOURCES_SUBSCRIBE,
            McpSchema.METHOD_RESOURCES_UNSUBSCRIBE);

    /**
     * The requests of tasks passed on to a server that offers them (see {@code ToolCatalog#ask}), a task-augmented
     * {@code tools/call} among them: the 2025-11-25 era's experimental {@code tasks} and the tasks extension.
     */
    static final Set<String> TASK_METHODS = Set.of(McpSchema.METHOD_TOOLS_CALL, "tasks/get", "tasks/result",
            "tasks/list", "tasks/cancel", "tasks/update");
    /** The 2026-07-28 era's tasks extension (SEP-2663), as a server declares it under {@code capabilities.extensions}. */
    static final String TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

    /**
     * The feature a server's capabilities declare for tasks of tool calls: {@code tasks} for the 2025-11-25 era's
     * experimental capability ({@code tasks.requests.tools.call}), {@code tasks-extension} for the extension; null
     * for neither.
     */
    static String tasksFeature(Map<?, ?> capabilities, boolean modern) {
        if (capabilities == null) {
            return null;
        }
        if (modern) {
            return capabilities.get("extensions") instanceof Map<?, ?> extensions && extensions.containsKey(TASKS_EXTENSION)
                    ? "tasks-extension" : null;
        }
        return capabilities.get("tasks") instanceof Map<?, ?> tasks && tasks.get("requests") instanceof Map<?, ?> requests
                && requests.get("tools") instanceof Map<?, ?> tools && tools.containsKey("call") ? "tasks" : null;
    }

    /** Which of resources, prompts and completions a server's capabilities declare, by name. */
    static Set<String> features(boolean resources, boolean prompts, boolean completions) {
        Set<String> features = new LinkedHashSet<>();
        if (resources) {
            features.add("resources");
        }
        if (prompts) {
            features.add("prompts");
        }
        if (completions) {
            features.add("completions");
        }
        return features;
    }

    /** The refusal of a request that is not passed on to a server. */
    static ServerRefusedException cannotAsk(String server, String method) {
        return new ServerRefusedException(McpSchema.ErrorCodes.METHOD_NOT_FOUND, "server " + server
                + " cannot be asked " + method);
    }

    /** Why a request to a server was not sent: the thread waiting for the server to start was interrupted. */
    static ServerRefusedException askingCancelled(String server, String method) {
        Thread.currentThread().interrupt();
        return new ServerRefusedException(McpSchema.ErrorCodes.INTERNAL_ERROR, "asking server " + server + " " + method
                + " was cancelled");
    }

    /** What the server said of itself when it connected ({@code instructions}); null when it said nothing. */
    abstract String instructions();

    /** How the server is reached ({@link DownstreamSettings#identity}); null when shared publicly or not known yet. */
    abstract String identity();

    /** The process id of a server execache started, -1 when it is not running or not a process. */
    abstract long pid();

    abstract void close();
}
