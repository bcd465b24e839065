package dev.execache.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.core.ToolCallOutcome;
import dev.execache.core.spi.CatalogTool;
import dev.execache.core.spi.ServerRefusedException;
import dev.execache.core.spi.ToolCatalog;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The servers' tasks of tool calls, passed through: the 2025-11-25 era's experimental {@code tasks} (a
 * {@code tools/call} with {@code task}, {@code tasks/get}, {@code tasks/result}, {@code tasks/list},
 * {@code tasks/cancel}) for an agent of that era, and the tasks extension ({@code io.modelcontextprotocol/tasks},
 * SEP-2663: a {@code tools/call} answered {@code resultType: "task"}, {@code tasks/get} with the result inlined,
 * {@code tasks/cancel}) for an agent of the 2026-07-28 era, both served by a server that offers the 2025-11-25 era's
 * tasks.
 *
 * <p>A task is known to the agent by an id of execache's own, unguessable, held here with the server that made it,
 * the server's id and the caller that asked: a task id is sent only to the server that made it, and only the caller
 * that made a task gets, lists or cancels it (over HTTP many agents share execache, and execache is one client of
 * each server). A task's final answer is stored as the plain call's answer would be ({@link Gateway#keepTaskAnswer}),
 * and a task asked of a call the cache answers is completed at once with that answer.
 */
public final class ServerTasks {
    /** The tasks extension, as capabilities name it under {@code extensions}. */
    public static final String EXTENSION = "io.modelcontextprotocol/tasks";
    static final String RELATED_TASK = "io.modelcontextprotocol/related-task";
    /** How long a task is held when its server gives it no time to live. */
    private static final Duration UNLIMITED_KEPT = Duration.ofHours(24);
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Set<String> ENDED = Set.of("completed", "failed", "cancelled");

    private final ToolCatalog catalog;
    private final StartingServers starting;
    private final Gateway gateway;
    private final Clock clock;
    private final Map<String, Held> held = new ConcurrentHashMap<>();

    ServerTasks(ToolCatalog catalog, StartingServers starting, Gateway gateway, Clock clock) {
        this.catalog = catalog;
        this.starting = starting;
        this.gateway = gateway;
        this.clock = clock;
    }

    /**
     * One task as execache holds it: whose it is and where it lives. {@code serverId} is null for a task execache
     * completed itself ({@code answer} then holds its result).
     */
    private static final class Held {
        final String caller;
        final CatalogTool tool;
        final Map<String, Object> args;
        final String agent;
        final String serverId;
        final Instant created;
        final long ttlMillis;
        final ObjectNode answer;
        /** Whether its final answer went to the cache already. */
        volatile boolean kept;

        Held(String caller, CatalogTool tool, Map<String, Object> args, String agent, String serverId, Instant created,
                long ttlMillis, ObjectNode answer) {
            this.caller = caller;
            this.tool = tool;
            this.args = args;
            this.agent = agent;
            this.serverId = serverId;
            this.created = created;
            this.ttlMillis = ttlMillis;
            this.answer = answer;
        }

        Instant expires() {
            return created.plusMillis(ttlMillis);
        }
    }

    /**
     * Whether a server behind execache offers tasks of tool calls (the 2025-11-25 era's capability); true while a
     * server is still starting, since serve answers {@code initialize} before its servers are up.
     */
    public boolean offered() {
        return starting.any() || catalog.features().values().stream().anyMatch(features -> features.contains("tasks"));
    }

    /** Whether {@code offeredTool} is a gateway tool whose server offers tasks of tool calls. */
    public boolean offers(String offeredTool) {
        CatalogTool tool = gateway.offeredTool(offeredTool);
        return tool != null && catalog.features().getOrDefault(tool.server(), Set.of()).contains("tasks");
    }

    /** Whether the tool may be called only as a task ({@code execution.taskSupport: required}). */
    public boolean required(String offeredTool) {
        CatalogTool tool = gateway.offeredTool(offeredTool);
        return tool != null && tool.definition().get("execution") instanceof Map<?, ?> execution
                && "required".equals(execution.get("taskSupport"));
    }

    /**
     * A tool call asked as a task.
     *
     * @param arguments the call's arguments (null for none)
     * @param task the 2025-11-25 era's {@code task} params ({@code ttl}); null for none
     * @param caller who may see the task (see the class); null when there is only one
     * @param agent who asks, counted with the cache's figures; null: nobody named
     * @param modern whether the agent speaks the 2026-07-28 era
     * @return for the 2025-11-25 era a CreateTaskResult ({@code task}); for the 2026-07-28 era a CreateTaskResult
     *     ({@code resultType: "task"}), or, when the cache holds the answer, the tool's result itself (no
     *     {@code resultType}: the caller marks it complete)
     */
    public ObjectNode call(String offeredTool, ObjectNode arguments, JsonNode task, String caller, String agent,
            boolean modern) {
        forgetExpired();
        CatalogTool tool = gateway.offeredTool(offeredTool);
        if (tool == null) {
            throw new ServerRefusedException(McpSchema.ErrorCodes.INVALID_PARAMS, "Unknown tool: " + offeredTool);
        }
        Map<String, Object> args = arguments == null || arguments.isNull() ? Map.of()
                : Json.MAPPER.convertValue(arguments, Gateway.OBJECT);
        Instant now = clock.instant();
        long askedTtl = task != null && task.path("ttl").canConvertToLong() ? task.path("ttl").asLong() : -1;
        Optional<ToolCallOutcome> cached = gateway.cachedTaskAnswer(tool.name(), args, agent);
        if (cached.isPresent()) {
            ToolCallOutcome outcome = cached.get();
            ObjectNode answer = read(outcome.result().json());
            // how the cache answered, as on a plain call's answer
            ObjectNode meta = answer.get("_meta") instanceof ObjectNode given ? given : answer.putObject("_meta");
            meta.set(CacheMeta.KEY, Json.MAPPER.valueToTree(CacheMeta.of(outcome.status(), outcome.storedAt(),
                    outcome.expiresAt(), outcome.notCachedBecause(), now)));
            if (modern) {
                return answer;
            }
            return createdHere(tool, args, caller, agent, now, askedTtl, answer);
        }
        ObjectNode params = Json.MAPPER.createObjectNode();
        params.put("name", tool.serverToolName());
        params.set("arguments", Json.MAPPER.valueToTree(args));
        ObjectNode taskParams = params.putObject("task");
        if (askedTtl >= 0) {
            taskParams.put("ttl", askedTtl);
        }
        ObjectNode created = ask(tool.server(), McpSchema.METHOD_TOOLS_CALL, params);
        if (!(created.get("task") instanceof ObjectNode serverTask) || !serverTask.path("taskId").isTextual()) {
            // the server answered the call itself: a task completed at once, as the agent asked for a task
            if (modern) {
                return created;
            }
            return createdHere(tool, args, caller, agent, now, askedTtl, created);
        }
        long ttl = serverTask.path("ttl").canConvertToLong() ? serverTask.path("ttl").asLong()
                : UNLIMITED_KEPT.toMillis();
        String id = newId();
        held.put(id, new Held(caller, tool, args, agent, serverTask.get("taskId").textValue(), now, ttl, null));
        if (modern) {
            ObjectNode result = modernTask(serverTask, id);
            result.put("resultType", "task");
            return result;
        }
        ObjectNode result = Json.MAPPER.createObjectNode();
        result.set("task", legacyTask(serverTask, id));
        return result;
    }

    private ObjectNode createdHere(CatalogTool tool, Map<String, Object> args, String caller, String agent, Instant now,
            long askedTtl, ObjectNode answer) {
        long ttl = askedTtl >= 0 ? askedTtl : UNLIMITED_KEPT.toMillis();
        String id = newId();
        Held task = new Held(caller, tool, args, agent, null, now, ttl, answer);
        task.kept = true;
        held.put(id, task);
        ObjectNode result = Json.MAPPER.createObjectNode();
        result.set("task", ownTask(id, task));
        return result;
    }

    /** {@code tasks/get}: the task's state; for the 2026-07-28 era with its result or error inlined once it ended. */
    public ObjectNode get(String taskId, String caller, boolean modern) {
        Held task = heldFor(taskId, caller);
        ObjectNode state = task.serverId == null ? ownTask(taskId, task)
                : legacyTask(ask(task.tool.server(), "tasks/get", idParams(task.serverId)), taskId);
        if (!modern) {
            return state;
        }
        ObjectNode result = modernTask(state, taskId);
        String status = result.path("status").asText();
        if ("completed".equals(status) || "failed".equals(status)) {
            try {
                ObjectNode answer = resultOf(task, taskId, status);
                ObjectNode meta = answer.get("_meta") instanceof ObjectNode given ? given : null;
                if (meta != null) {
                    // the task's id is the answer's own here (SEP-2663)
                    meta.remove(RELATED_TASK);
                    if (meta.isEmpty()) {
                        answer.remove("_meta");
                    }
                }
                result.set("result", answer);
                result.put("status", "completed");
            } catch (ServerRefusedException e) {
                ObjectNode error = result.putObject("error");
                error.put("code", e.code());
                error.put("message", e.getMessage());
                result.put("status", "failed");
            }
        } else if ("input_required".equals(status)) {
            // a 2025-11-25 server asks during a task on the stream of tasks/result, which this era does not have
            result.putObject("inputRequests");
        }
        return result;
    }

    /**
     * {@code tasks/result} (the 2025-11-25 era): the task's final answer once it ended (the server waits until then);
     * a completed task's answer is stored as the plain call's would be.
     */
    public ObjectNode result(String taskId, String caller) {
        return resultOf(heldFor(taskId, caller), taskId, null);
    }

    /**
     * The task's final answer, stored once when the task completed.
     *
     * @param status the task's status as its server last said it; null: asked once the answer came
     */
    private ObjectNode resultOf(Held task, String taskId, String status) {
        ObjectNode answer = task.serverId == null ? task.answer.deepCopy()
                : ask(task.tool.server(), "tasks/result", idParams(task.serverId));
        // only a completed task's answer, of a tool whose calls are cached (the server is asked its status only then)
        if (!task.kept && task.serverId != null && gateway.decision(task.tool.name()).cached()
                && "completed".equals(status != null ? status
                : ask(task.tool.server(), "tasks/get", idParams(task.serverId)).path("status").asText())) {
            task.kept = true;
            ObjectNode stored = answer.deepCopy();
            if (stored.get("_meta") instanceof ObjectNode meta) {
                meta.remove(RELATED_TASK);
                if (meta.isEmpty()) {
                    stored.remove("_meta");
                }
            }
            gateway.keepTaskAnswer(task.tool.name(), task.args, task.agent, Json.write(stored),
                    stored.path("isError").asBoolean(false));
        }
        ObjectNode meta = answer.get("_meta") instanceof ObjectNode given ? given : answer.putObject("_meta");
        meta.putObject(RELATED_TASK).put("taskId", taskId);
        return answer;
    }

    /** {@code tasks/list} (the 2025-11-25 era): the caller's tasks, in one page. */
    public ObjectNode list(String caller) {
        forgetExpired();
        ObjectNode result = Json.MAPPER.createObjectNode();
        ArrayNode tasks = result.putArray("tasks");
        held.forEach((id, task) -> {
            if (!same(task.caller, caller)) {
                return;
            }
            try {
                tasks.add(get(id, caller, false));
            } catch (ServerRefusedException e) {
                // gone from its server (its time to live ended, or the server restarted)
                held.remove(id);
            }
        });
        return result;
    }

    /**
     * {@code tasks/cancel}: the server is asked to cancel the task; for the 2025-11-25 era the task as it is then,
     * for the 2026-07-28 era an empty acknowledgement.
     */
    public ObjectNode cancel(String taskId, String caller, boolean modern) {
        Held task = heldFor(taskId, caller);
        if (task.serverId == null) {
            // completed already: a terminal task cannot be cancelled
            if (modern) {
                return Json.MAPPER.createObjectNode();
            }
            throw new ServerRefusedException(McpSchema.ErrorCodes.INVALID_PARAMS, "Cannot cancel task " + taskId
                    + ": it is completed already");
        }
        ObjectNode cancelled;
        try {
            cancelled = ask(task.tool.server(), "tasks/cancel", idParams(task.serverId));
        } catch (ServerRefusedException e) {
            // the extension acknowledges a cancel of a task that ended already, as of one still working (SEP-2663);
            // the 2025-11-25 era refuses it, as the server did
            if (modern && ENDED.contains(ask(task.tool.server(), "tasks/get", idParams(task.serverId))
                    .path("status").asText())) {
                return Json.MAPPER.createObjectNode();
            }
            throw e;
        }
        return modern ? Json.MAPPER.createObjectNode() : legacyTask(cancelled, taskId);
    }

    /**
     * {@code tasks/update} (the 2026-07-28 era): a 2025-11-25 server asks for input during a task on the stream of
     * {@code tasks/result}, so there is nothing to answer here.
     */
    public ObjectNode update(String taskId, String caller) {
        Held task = heldFor(taskId, caller);
        throw new ServerRefusedException(McpSchema.ErrorCodes.INVALID_PARAMS, "task " + taskId + " of server "
                + task.tool.server() + " takes no input through tasks/update (its server speaks the 2025-11-25 era)");
    }

    private Held heldFor(String taskId, String caller) {
        Held task = taskId == null ? null : held.get(taskId);
        if (task == null || !same(task.caller, caller)) {
            // another caller's task is not said to exist
            throw new ServerRefusedException(McpSchema.ErrorCodes.INVALID_PARAMS, "Task not found: " + taskId);
        }
        return task;
    }

    private static boolean same(String one, String other) {
        return one == null ? other == null : one.equals(other);
    }

    private void forgetExpired() {
        Instant now = clock.instant();
        held.values().removeIf(task -> task.expires().isBefore(now));
    }

    private ObjectNode ask(String server, String method, ObjectNode params) {
        return read(catalog.ask(server, method, Json.write(params)));
    }

    private static ObjectNode read(String json) {
        try {
            return (ObjectNode) Json.MAPPER.readTree(json);
        } catch (IOException | ClassCastException e) {
            throw new ServerRefusedException(McpSchema.ErrorCodes.INTERNAL_ERROR, "a server's answer is not a JSON object");
        }
    }

    private static ObjectNode idParams(String id) {
        ObjectNode params = Json.MAPPER.createObjectNode();
        params.put("taskId", id);
        return params;
    }

    /** A task execache completed itself, as the 2025-11-25 era writes a task. */
    private static ObjectNode ownTask(String id, Held task) {
        ObjectNode state = Json.MAPPER.createObjectNode();
        state.put("taskId", id);
        state.put("status", "completed");
        state.put("createdAt", task.created.toString());
        state.put("lastUpdatedAt", task.created.toString());
        state.put("ttl", task.ttlMillis);
        return state;
    }

    /** A server's task (the 2025-11-25 era's fields) under execache's id. */
    private static ObjectNode legacyTask(ObjectNode serverTask, String id) {
        ObjectNode state = serverTask.deepCopy();
        state.put("taskId", id);
        state.remove("_meta");
        return state;
    }

    /** A task of the 2025-11-25 era's fields as the tasks extension writes it ({@code ttlMs}, {@code pollIntervalMs}). */
    private static ObjectNode modernTask(ObjectNode legacy, String id) {
        ObjectNode state = Json.MAPPER.createObjectNode();
        state.put("taskId", id);
        state.set("status", legacy.get("status"));
        if (legacy.has("statusMessage")) {
            state.set("statusMessage", legacy.get("statusMessage"));
        }
        state.set("createdAt", legacy.get("createdAt"));
        state.set("lastUpdatedAt", legacy.has("lastUpdatedAt") ? legacy.get("lastUpdatedAt") : legacy.get("createdAt"));
        JsonNode ttl = legacy.get("ttl");
        state.set("ttlMs", ttl == null ? Json.MAPPER.nullNode() : ttl);
        if (legacy.path("pollInterval").isNumber()) {
            state.set("pollIntervalMs", legacy.get("pollInterval"));
        }
        return state;
    }

    private static String newId() {
        byte[] bytes = new byte[16];
        RANDOM.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }
}
