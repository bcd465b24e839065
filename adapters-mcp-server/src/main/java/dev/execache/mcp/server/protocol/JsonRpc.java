package dev.execache.mcp.server.protocol;

import dev.execache.gateway.Json;

import java.io.IOException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.ErrorCodes;
import io.modelcontextprotocol.spec.McpSchema.LoggingLevel;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The one place a JSON-RPC message to serve is checked, for both transports and both eras: {@link #read} tells a
 * request, a notification, a response and a batch apart and gives a request only when its envelope, its era's
 * method and its params are whole; else an {@link Invalid} that names what is wrong. The transports frame (lines,
 * POST bodies, SSE) and answer what comes out of here; a new method is one line in {@link #isMethodOf} and its
 * params' rule in {@link #paramsProblem}.
 */
public final class JsonRpc {
    public static final String MODERN = "2026-07-28";
    /** The versions of the initialize era that serve accepts, newest first. */
    public static final List<String> LEGACY = List.of("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05");
    public static final String PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion";
    public static final String CLIENT_CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities";
    static final String LOG_LEVEL_META = "io.modelcontextprotocol/logLevel";
    static final String SERVER_INFO_META = "io.modelcontextprotocol/serverInfo";
    /** The envelope's client info ({@code name}, {@code version}): who asks, as {@code initialize} said it before. */
    static final String CLIENT_INFO_META = "io.modelcontextprotocol/clientInfo";
    static final String DISCOVER = "server/discover";
    /** The 2026-07-28 era's stream of the list changes and resource updates a client opts in to. */
    public static final String LISTEN = "subscriptions/listen";
    public static final String CANCELLED = "notifications/cancelled";
    public static final int HEADER_MISMATCH = -32020;
    static final int UNSUPPORTED_PROTOCOL_VERSION = -32022;
    private static final String LEVELS = "debug, info, notice, warning, error, critical, alert, emergency";
    private static final Set<String> EITHER_ERA = Set.of(McpSchema.METHOD_TOOLS_LIST, McpSchema.METHOD_TOOLS_CALL,
            McpSchema.METHOD_RESOURCES_LIST, McpSchema.METHOD_RESOURCES_TEMPLATES_LIST, McpSchema.METHOD_RESOURCES_READ,
            McpSchema.METHOD_PROMPT_LIST, McpSchema.METHOD_PROMPT_GET, McpSchema.METHOD_COMPLETION_COMPLETE);
    /** The requests of the servers' tasks (see {@link dev.execache.gateway.ServerTasks}), each of its era's. */
    public static final Set<String> TASKS = Set.of("tasks/get", "tasks/result", "tasks/list", "tasks/cancel",
            "tasks/update");
    /** The servers' lists execache passes on, beside tools/list: paged by a cursor, cached by the 2026-07-28 hints. */
    static final Set<String> LISTS = Set.of(McpSchema.METHOD_RESOURCES_LIST, McpSchema.METHOD_RESOURCES_TEMPLATES_LIST,
            McpSchema.METHOD_PROMPT_LIST);

    private JsonRpc() {
    }

    /** One message as a transport framed it. */
    public sealed interface Message permits Request, Notification, Response, Batch, Invalid {
    }

    /**
     * A request whose envelope, method and params were checked: {@code params} is never null (an empty object when
     * the message had none); {@code modern} says it is of the 2026-07-28 era (it claims the envelope, or discovers).
     */
    public record Request(ObjectNode message, JsonNode id, String method, ObjectNode params, boolean modern) implements Message {
        /** The id as a plain value (a string or a number), as {@link dev.execache.gateway.InFlightCalls} keys calls. */
        public Object idValue() {
            return JsonRpc.idValue(id);
        }
    }

    public record Notification(ObjectNode message, String method, ObjectNode params) implements Message {
    }

    /** A client's answer to a request of the server's. */
    public record Response(ObjectNode message, JsonNode id) implements Message {
    }

    /** A JSON array: whether a batch is taken is the transport's and the negotiated version's. */
    public record Batch(ArrayNode items) implements Message {
    }

    /**
     * What is wrong with a message, as the error that answers it; {@code source} is the message when it was a JSON
     * object with a method (a transport may check its headers against it), else null.
     */
    public record Invalid(ObjectNode source, JsonNode id, int code, String message, JsonNode data, Fault fault, boolean modern)
            implements Message {
        public String text() {
            return error(id, code, message, data);
        }
    }

    /** Where a message went wrong: a transport may answer each with its own status (HTTP's 400, 404, 200). */
    public enum Fault {
        /** Not a JSON-RPC message at all. */
        MESSAGE,
        /** The 2026-07-28 envelope in {@code _meta} is not whole, or names a version serve does not speak. */
        ENVELOPE,
        /** The method is not one of its era's. */
        METHOD,
        /** The method's params are not what it takes. */
        PARAMS
    }

    /** A message's text parsed and read; {@code what} names the frame in a parse error ("line", "body"). */
    public static Message parse(String text, String what) {
        JsonNode tree;
        try {
            tree = Json.MAPPER.readTree(text);
        } catch (java.io.IOException e) {
            tree = null;
        }
        return tree == null ? invalid(null, ErrorCodes.PARSE_ERROR, "Parse error: the " + what + " is not JSON", Fault.MESSAGE)
                : read(tree);
    }

    /** A parsed message, read and checked. */
    public static Message read(JsonNode tree) {
        if (tree instanceof ArrayNode batch) {
            return new Batch(batch);
        }
        if (!(tree instanceof ObjectNode message)) {
            return invalid(null, ErrorCodes.INVALID_REQUEST,
                    "Invalid Request: not a JSON-RPC 2.0 request, notification or response", Fault.MESSAGE);
        }
        JsonNode id = message.get("id");
        boolean hasId = id != null && (id.isTextual() || id.isIntegralNumber());
        if (!McpSchema.JSONRPC_VERSION.equals(message.path("jsonrpc").textValue())) {
            return invalid(hasId ? id : null, ErrorCodes.INVALID_REQUEST, "Invalid Request: jsonrpc must be \"2.0\"",
                    Fault.MESSAGE);
        }
        if (!message.path("method").isTextual()) {
            if (id != null && (message.has("result") || message.has("error"))) {
                return new Response(message, id);
            }
            return invalid(hasId ? id : null, ErrorCodes.INVALID_REQUEST,
                    "Invalid Request: not a JSON-RPC 2.0 request, notification or response", Fault.MESSAGE);
        }
        String method = message.get("method").textValue();
        JsonNode params = message.get("params");
        ObjectNode given = params instanceof ObjectNode object ? object : Json.MAPPER.createObjectNode();
        if (id == null) {
            return new Notification(message, method, given);
        }
        if (!hasId) {
            return invalid(null, ErrorCodes.INVALID_REQUEST, "Invalid Request: id must be a string or an integer",
                    Fault.MESSAGE);
        }
        boolean modern = isModern(method, params);
        if (params != null && !params.isNull() && !params.isObject()) {
            return new Invalid(message, id, ErrorCodes.INVALID_PARAMS, "Invalid params: params must be an object", null,
                    Fault.PARAMS, modern);
        }
        if (claimsEnvelope(params)) {
            String problem = envelopeProblem(params);
            if (problem != null) {
                return new Invalid(message, id, ErrorCodes.INVALID_PARAMS, problem, null, Fault.ENVELOPE, true);
            }
            String claimed = params.get("_meta").get(PROTOCOL_VERSION_META).textValue();
            if (!MODERN.equals(claimed)) {
                ObjectNode data = Json.MAPPER.createObjectNode();
                data.putArray("supported").add(MODERN);
                data.put("requested", claimed);
                return new Invalid(message, id, UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version: " + claimed
                        + " (this server speaks " + MODERN + " per request, and " + String.join(", ", LEGACY)
                        + " through initialize)", data, Fault.ENVELOPE, true);
            }
        }
        if (!isMethodOf(method, modern)) {
            return new Invalid(message, id, ErrorCodes.METHOD_NOT_FOUND, "Method not found: " + method
                    + (modern ? " (not a method of protocol version " + MODERN + ")" : ""), null, Fault.METHOD, modern);
        }
        String problem = paramsProblem(method, given);
        if (problem != null) {
            return new Invalid(message, id, ErrorCodes.INVALID_PARAMS, problem, null, Fault.PARAMS, modern);
        }
        return new Request(message, id, method, given, modern);
    }

    /** Whether the era has the method: 2026-07-28 dropped initialize, ping and logging/setLevel. */
    static boolean isMethodOf(String method, boolean modern) {
        if (EITHER_ERA.contains(method)) {
            return true;
        }
        return switch (method) {
            // the 2025-11-25 era's experimental tasks, and the tasks extension of the 2026-07-28 era (SEP-2663)
            case "tasks/get", "tasks/cancel" -> true;
            case "tasks/result", "tasks/list" -> !modern;
            case "tasks/update" -> modern;
            case DISCOVER, LISTEN -> modern;
            case McpSchema.METHOD_INITIALIZE, McpSchema.METHOD_PING, McpSchema.METHOD_LOGGING_SET_LEVEL,
                    McpSchema.METHOD_RESOURCES_SUBSCRIBE, McpSchema.METHOD_RESOURCES_UNSUBSCRIBE -> !modern;
            default -> false;
        };
    }

    /** What is wrong with a known method's params, or null when they are what it takes. */
    private static String paramsProblem(String method, ObjectNode params) {
        if (params.has("_meta") && !params.get("_meta").isObject() && !params.get("_meta").isNull()) {
            return "Invalid params: params._meta must be an object";
        }
        return switch (method) {
            case McpSchema.METHOD_INITIALIZE -> {
                if (!params.path("protocolVersion").isTextual()) {
                    yield "Invalid params: params.protocolVersion must be a string";
                }
                yield params.has("capabilities") && !params.get("capabilities").isObject()
                        ? "Invalid params: params.capabilities must be an object" : null;
            }
            case McpSchema.METHOD_TOOLS_CALL -> {
                if (!params.path("name").isTextual()) {
                    yield "Invalid params: params.name must be the tool's name as a string";
                }
                JsonNode arguments = params.get("arguments");
                if (arguments != null && !arguments.isObject() && !arguments.isNull()) {
                    yield "Invalid params: params.arguments must be an object";
                }
                JsonNode token = params.path("_meta").get("progressToken");
                yield token != null && !token.isTextual() && !token.isIntegralNumber()
                        ? "Invalid params: params._meta.progressToken must be a string or an integer" : null;
            }
            case McpSchema.METHOD_LOGGING_SET_LEVEL -> level(params.get("level")) == null
                    ? "Invalid params: params.level must be one of " + LEVELS : null;
            case McpSchema.METHOD_RESOURCES_READ, McpSchema.METHOD_RESOURCES_SUBSCRIBE,
                    McpSchema.METHOD_RESOURCES_UNSUBSCRIBE -> params.path("uri").isTextual() ? null
                    : "Invalid params: params.uri must be the resource's URI as a string";
            case McpSchema.METHOD_PROMPT_GET -> {
                if (!params.path("name").isTextual()) {
                    yield "Invalid params: params.name must be the prompt's name as a string";
                }
                JsonNode arguments = params.get("arguments");
                if (arguments != null && !arguments.isNull()) {
                    if (!arguments.isObject()) {
                        yield "Invalid params: params.arguments must be an object";
                    }
                    for (JsonNode value : arguments) {
                        if (!value.isTextual()) {
                            yield "Invalid params: params.arguments' values must be strings";
                        }
                    }
                }
                yield null;
            }
            case McpSchema.METHOD_COMPLETION_COMPLETE -> {
                JsonNode ref = params.path("ref");
                String type = ref.path("type").textValue();
                if (!"ref/prompt".equals(type) && !"ref/resource".equals(type)) {
                    yield "Invalid params: params.ref.type must be ref/prompt or ref/resource";
                }
                if (!ref.path("ref/prompt".equals(type) ? "name" : "uri").isTextual()) {
                    yield "Invalid params: params.ref." + ("ref/prompt".equals(type) ? "name" : "uri") + " must be a string";
                }
                yield params.path("argument").path("name").isTextual() && params.path("argument").path("value").isTextual()
                        ? null : "Invalid params: params.argument must have a name and a value, both strings";
            }
            case "tasks/get", "tasks/result", "tasks/cancel", "tasks/update" -> params.path("taskId").isTextual() ? null
                    : "Invalid params: params.taskId must be the task's id as a string";
            case LISTEN -> {
                if (!params.path("notifications").isObject()) {
                    yield "Invalid params: params.notifications must be an object naming the notifications to send";
                }
                for (String flag : List.of("toolsListChanged", "promptsListChanged", "resourcesListChanged")) {
                    JsonNode value = params.get("notifications").get(flag);
                    if (value != null && !value.isBoolean()) {
                        yield "Invalid params: params.notifications." + flag + " must be a boolean";
                    }
                }
                JsonNode uris = params.get("notifications").get("resourceSubscriptions");
                if (uris != null) {
                    if (!uris.isArray()) {
                        yield "Invalid params: params.notifications.resourceSubscriptions must be an array of URIs";
                    }
                    for (JsonNode uri : uris) {
                        if (!uri.isTextual()) {
                            yield "Invalid params: params.notifications.resourceSubscriptions must be an array of URIs";
                        }
                    }
                }
                yield null;
            }
            case McpSchema.METHOD_RESOURCES_LIST, McpSchema.METHOD_RESOURCES_TEMPLATES_LIST, McpSchema.METHOD_PROMPT_LIST,
                    McpSchema.METHOD_TOOLS_LIST -> {
                JsonNode cursor = params.get("cursor");
                yield cursor != null && !cursor.isTextual() && !cursor.isNull()
                        ? "Invalid params: params.cursor must be a string" : null;
            }
            default -> null;
        };
    }

    /** The era a request is of: the modern one when it claims the envelope or discovers. */
    static boolean isModern(String method, JsonNode params) {
        return claimsEnvelope(params) || DISCOVER.equals(method);
    }

    /** Whether a request's params carry the 2026-07-28 envelope (its protocol version key). */
    public static boolean claimsEnvelope(JsonNode params) {
        return params != null && params.path("_meta").isObject() && params.get("_meta").has(PROTOCOL_VERSION_META);
    }

    /** What is wrong with a request's envelope, or null when it is whole. */
    public static String envelopeProblem(JsonNode params) {
        JsonNode meta = params.get("_meta");
        if (!meta.path(PROTOCOL_VERSION_META).isTextual()) {
            return "Invalid _meta envelope for protocol revision " + MODERN + ": " + PROTOCOL_VERSION_META
                    + " must be a protocol version string";
        }
        if (!meta.path(CLIENT_CAPABILITIES_META).isObject()) {
            return "Invalid _meta envelope for protocol revision " + MODERN + ": " + CLIENT_CAPABILITIES_META
                    + (meta.has(CLIENT_CAPABILITIES_META) ? " must be an object" : " is missing");
        }
        JsonNode level = meta.get(LOG_LEVEL_META);
        if (level != null && level(level) == null) {
            return "Invalid _meta envelope for protocol revision " + MODERN + ": " + LOG_LEVEL_META + " must be one of "
                    + LEVELS;
        }
        return null;
    }

    /** A log level as MCP writes it (lower case), or null when it is not one. */
    public static LoggingLevel level(JsonNode level) {
        if (level == null || !level.isTextual() || !level.textValue().equals(level.textValue().toLowerCase(Locale.ROOT))) {
            return null;
        }
        return Arrays.stream(LoggingLevel.values()).filter(each -> each.name().equalsIgnoreCase(level.textValue()))
                .findFirst().orElse(null);
    }

    public static Object idValue(JsonNode id) {
        return id.isTextual() ? id.textValue() : id.numberValue();
    }

    public static String error(JsonNode id, int code, String message, JsonNode data) {
        ObjectNode response = Json.MAPPER.createObjectNode();
        response.put("jsonrpc", McpSchema.JSONRPC_VERSION);
        response.set("id", id == null ? Json.MAPPER.nullNode() : id);
        ObjectNode error = response.putObject("error");
        error.put("code", code);
        error.put("message", message);
        if (data != null) {
            error.set("data", data);
        }
        return Json.write(response);
    }

    /**
     * The error code of a response written by {@link #error} or {@link #response}, as text; null for a
     * result. Reads the whole response only when it is not a result (a result's key comes right after its id).
     */
    public static String errorCode(String response) {
        int result = response.indexOf(",\"result\":");
        if (result >= 0 && response.lastIndexOf(",\"error\":", result) < 0) {
            return null;
        }
        try {
            JsonNode code = Json.MAPPER.readTree(response).path("error").path("code");
            return code.isNumber() ? code.asText() : null;
        } catch (IOException e) {
            return null;
        }
    }

    /** The whole response to a request, its result already written as JSON. */
    public static String response(JsonNode id, String result) {
        // an integer id is its digits, as the mapper writes it, without a writer made for them
        String written = id == null ? "null" : id.isIntegralNumber() ? id.asText() : Json.write(id);
        return "{\"jsonrpc\":\"2.0\",\"id\":" + written + ",\"result\":" + result + "}";
    }

    private static Invalid invalid(JsonNode id, int code, String message, Fault fault) {
        return new Invalid(null, id, code, message, null, fault, false);
    }
}
