package dev.execache.mcp.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.core.Agents;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.LoggingLevel;
import java.io.IOException;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * MCP answered one request at a time, with no session: every request of the 2026-07-28 era (on
 * stdio and HTTP alike), and on HTTP the 2025 era's requests too, so that any instance of a fleet
 * can answer any request. It serves the same {@link ServeTools} as the stdio session.
 *
 * <p>The MCP Java SDK has no 2026-07-28 era (modelcontextprotocol/java-sdk #1011: server/discover,
 * the per-request {@code _meta} envelope) and its stateless server answers only JSON, so a tool
 * call cannot stream progress on its own SSE response (java-sdk #539). This class is that layer,
 * written once for both transports; delete it when the SDK has both.
 */
public final class StatelessProtocol implements AutoCloseable {
    public static final String MODERN = "2026-07-28";
    /** The versions of the initialize era that serve accepts, newest first. */
    public static final List<String> LEGACY = List.of("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05");
    static final String PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion";
    static final String CLIENT_CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities";
    static final String LOG_LEVEL_META = "io.modelcontextprotocol/logLevel";
    static final String SERVER_INFO_META = "io.modelcontextprotocol/serverInfo";
    /** The envelope's client info ({@code name}, {@code version}): who asks, as {@code initialize} said it before. */
    static final String CLIENT_INFO_META = "io.modelcontextprotocol/clientInfo";
    static final String DISCOVER = "server/discover";
    static final int HEADER_MISMATCH = -32020;
    static final int UNSUPPORTED_PROTOCOL_VERSION = -32022;
    /** How long a client may keep the tool list: longer when it cannot change while serve runs. */
    private static final long FIXED_LIST_TTL_MS = 300_000;
    private static final long CHANGING_LIST_TTL_MS = 30_000;
    /** While a server is still starting its tools are yet to come: the client lists again soon. */
    private static final long STARTING_LIST_TTL_MS = 1_000;
    /** The longest answer text kept for a repeat of the same answer: a longer one is written each time. */
    private static final int KEPT_WRITTEN_CHARS = 128 * 1024;

    private final McpJsonMapper mapper;
    private final String version;
    private final InFlightCalls calls;
    private final boolean listChanges;
    /** The gateway, whose servers may still be starting; null without one. */
    private final Gateway gateway;
    private final Map<String, SyncToolSpecification> tools = new LinkedHashMap<>();
    private final BiConsumer<String, ObjectNode> fallback;
    private final Map<String, Stream> streams = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong();
    private final RequestLogs logs = new RequestLogs();
    /** Each tool's last answer and its text, for a repeat of the same answer (see {@link #resultText}). */
    private final Map<String, Written> lastWritten = new ConcurrentHashMap<>();

    /**
     * @param fallback where notifications of requests that have no stream of their own go (the
     *     stdio session's, for its progress tokens)
     */
    StatelessProtocol(ServeTools serveTools, String version, McpJsonMapper mapper, BiConsumer<String, ObjectNode> fallback) {
        this.mapper = mapper;
        this.version = version;
        this.calls = serveTools.calls();
        this.listChanges = serveTools.gateway() != null;
        this.gateway = serveTools.gateway();
        this.fallback = fallback;
        serveTools.specifications().forEach(spec -> tools.put(spec.tool().name(), spec));
        serveTools.notifyWith(this::route);
        Logger.getLogger("dev.execache").addHandler(logs);
    }

    /** Offers new or changed tools and withdraws others. */
    synchronized void replaceTools(List<SyncToolSpecification> changed, List<String> withdrawn) {
        withdrawn.forEach(tools::remove);
        withdrawn.forEach(lastWritten::remove);
        changed.forEach(spec -> {
            tools.put(spec.tool().name(), spec);
            lastWritten.remove(spec.tool().name());
        });
    }

    /** Whether a request's params carry the 2026-07-28 envelope (its protocol version key). */
    static boolean claimsEnvelope(JsonNode params) {
        return params != null && params.path("_meta").isObject() && params.get("_meta").has(PROTOCOL_VERSION_META);
    }

    /** What is wrong with a request's envelope, or null when it is whole. */
    static String envelopeProblem(JsonNode params) {
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
            return "Invalid _meta envelope for protocol revision " + MODERN + ": " + LOG_LEVEL_META
                    + " must be one of debug, info, notice, warning, error, critical, alert, emergency";
        }
        return null;
    }

    /** Whether the era has the method: 2026-07-28 dropped initialize, ping and logging/setLevel. */
    static boolean isMethodOf(String method, boolean modern) {
        return switch (method) {
            case DISCOVER, McpSchema.METHOD_TOOLS_LIST, McpSchema.METHOD_TOOLS_CALL -> true;
            case McpSchema.METHOD_INITIALIZE, McpSchema.METHOD_PING, McpSchema.METHOD_LOGGING_SET_LEVEL -> !modern;
            default -> false;
        };
    }

    /** The era a request is of: the modern one when it claims the envelope or discovers. */
    static boolean isModern(String method, JsonNode params) {
        return claimsEnvelope(params) || DISCOVER.equals(method);
    }

    /**
     * The answer to one JSON-RPC request, as JSON text.
     *
     * @param callId the id under which {@link InFlightCalls} knows a tool call, so that it can be cancelled
     * @param stream where this request's notifications (progress, logs) go; null: the fallback's
     */
    public String answer(ObjectNode request, Object callId, BiConsumer<String, ObjectNode> stream) {
        return answer(request, callId, stream, null);
    }

    /**
     * As {@link #answer(ObjectNode, Object, BiConsumer)}, for a request whose transport knows who
     * sends it: {@code agent} (a named token's name) counts its calls before the envelope's client
     * name; null: the client's name, else {@code unknown}.
     */
    public String answer(ObjectNode request, Object callId, BiConsumer<String, ObjectNode> stream, String agent) {
        JsonNode id = request.get("id");
        String method = request.path("method").asText();
        JsonNode params = request.get("params");
        if (params != null && !params.isNull() && !params.isObject()) {
            return error(id, McpSchema.ErrorCodes.INVALID_PARAMS, "Invalid params: params must be an object", null);
        }
        ObjectNode given = params instanceof ObjectNode object ? object : Json.MAPPER.createObjectNode();
        boolean modern = isModern(method, params);
        if (claimsEnvelope(params)) {
            String problem = envelopeProblem(params);
            if (problem != null) {
                return error(id, McpSchema.ErrorCodes.INVALID_PARAMS, problem, null);
            }
            String claimed = params.at("/_meta/" + PROTOCOL_VERSION_META.replace("/", "~1")).textValue();
            if (!MODERN.equals(claimed)) {
                return unsupportedVersion(id, claimed);
            }
        }
        if (!isMethodOf(method, modern)) {
            return notFound(id, method);
        }
        try {
            return switch (method) {
                case McpSchema.METHOD_PING -> result(id, Json.MAPPER.createObjectNode(), false, method);
                case DISCOVER -> result(id, discover(), true, method);
                case McpSchema.METHOD_TOOLS_LIST -> result(id, toolList(modern), modern, method);
                case McpSchema.METHOD_TOOLS_CALL -> callTool(id, given, modern, callId, stream, agent);
                case McpSchema.METHOD_INITIALIZE -> initialize(id, given);
                case McpSchema.METHOD_LOGGING_SET_LEVEL -> setLevel(id, given);
                default -> notFound(id, method);
            };
        } catch (IOException e) {
            return error(id, McpSchema.ErrorCodes.INTERNAL_ERROR, "cannot write the answer: " + e.getMessage(), null);
        }
    }

    private String initialize(JsonNode id, ObjectNode params) throws IOException {
        if (!params.path("protocolVersion").isTextual()) {
            return error(id, McpSchema.ErrorCodes.INVALID_PARAMS, "Invalid params: params.protocolVersion must be a string", null);
        }
        String requested = params.get("protocolVersion").textValue();
        ObjectNode result = Json.MAPPER.createObjectNode();
        result.put("protocolVersion", LEGACY.contains(requested) ? requested : LEGACY.get(0));
        result.set("capabilities", capabilities());
        result.set("serverInfo", serverInfo());
        result.put("instructions", McpStdioServer.INSTRUCTIONS);
        return result(id, result, false, McpSchema.METHOD_INITIALIZE);
    }

    private String setLevel(JsonNode id, ObjectNode params) throws IOException {
        if (level(params.get("level")) == null) {
            return error(id, McpSchema.ErrorCodes.INVALID_PARAMS, "Invalid params: params.level must be one of debug, info, "
                    + "notice, warning, error, critical, alert, emergency", null);
        }
        // no session keeps the level: on HTTP a client sets it per request, in _meta
        return result(id, Json.MAPPER.createObjectNode(), false, McpSchema.METHOD_LOGGING_SET_LEVEL);
    }

    private ObjectNode discover() {
        ObjectNode result = Json.MAPPER.createObjectNode();
        ArrayNode versions = result.putArray("supportedVersions");
        versions.add(MODERN);
        LEGACY.forEach(versions::add);
        result.set("capabilities", capabilities());
        result.set("serverInfo", serverInfo());
        result.put("instructions", McpStdioServer.INSTRUCTIONS);
        return result;
    }

    private ObjectNode toolList(boolean modern) {
        ObjectNode result = Json.MAPPER.createObjectNode();
        ArrayNode list = result.putArray("tools");
        synchronized (this) {
            tools.values().forEach(spec -> list.add(Json.MAPPER.valueToTree(spec.tool())));
        }
        if (modern) {
            result.put("ttlMs", !listChanges ? FIXED_LIST_TTL_MS
                    : gateway.starting() ? STARTING_LIST_TTL_MS : CHANGING_LIST_TTL_MS);
        }
        return result;
    }

    private String callTool(JsonNode id, ObjectNode params, boolean modern, Object callId,
            BiConsumer<String, ObjectNode> stream, String agent) throws IOException {
        if (!params.path("name").isTextual()) {
            return error(id, McpSchema.ErrorCodes.INVALID_PARAMS, "Invalid params: params.name must be the tool's name as a string", null);
        }
        JsonNode arguments = params.get("arguments");
        if (arguments != null && !arguments.isNull() && !arguments.isObject()) {
            return error(id, McpSchema.ErrorCodes.INVALID_PARAMS, "Invalid params: params.arguments must be an object", null);
        }
        String name = params.get("name").textValue();
        SyncToolSpecification spec;
        synchronized (this) {
            spec = tools.get(name);
        }
        if (spec == null && gateway != null) {
            // a tool of a server still starting: the call waits for it, as a call to a restarting server does
            try {
                if (gateway.awaitTool(name)) {
                    synchronized (this) {
                        spec = tools.get(name);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return toolResult(id, ServeTools.shuttingDown(), modern);
            }
        }
        if (spec == null) {
            return error(id, McpSchema.ErrorCodes.INVALID_PARAMS, "Unknown tool: " + name, null);
        }
        // a shallow copy: only its own keys change, the client's nodes are only read
        ObjectNode meta = Json.MAPPER.createObjectNode();
        if (params.get("_meta") instanceof ObjectNode given) {
            meta.setAll(given);
        }
        JsonNode token = meta.get("progressToken");
        if (token != null && !token.isTextual() && !token.isIntegralNumber()) {
            return error(id, McpSchema.ErrorCodes.INVALID_PARAMS,
                    "Invalid params: params._meta.progressToken must be a string or an integer", null);
        }
        String streamKey = null;
        if (stream != null) {
            streamKey = "execache-" + ids.incrementAndGet();
            streams.put(streamKey, new Stream(token, stream, modern ? level(meta.get(LOG_LEVEL_META)) : null));
            if (token != null) {
                meta.put("progressToken", streamKey);
            }
        }
        meta.set(ServeTools.REQUEST_ID_META, Json.MAPPER.valueToTree(callId));
        meta.put(ServeTools.AGENT_META, Agents.firstOf(agent, meta.path(CLIENT_INFO_META).path("name").textValue()));
        CallToolResult result;
        try {
            // the request's parts as the SDK's creator would get them, without a copy of the whole
            Function<JsonNode, Object> other = node -> mapper.convertValue(node, Object.class);
            CallToolRequest request = new CallToolRequest(name,
                    arguments == null || arguments.isNull() ? null : Json.plain((ObjectNode) arguments, other),
                    Json.plain(meta, other));
            result = spec.callHandler().apply(null, request);
        } finally {
            if (streamKey != null) {
                streams.remove(streamKey);
            }
        }
        return response(id, resultText(name, result, modern));
    }

    /** The answer to a request that was stopped because the server is stopping. */
    String shuttingDown(ObjectNode request) {
        JsonNode id = request.get("id");
        if (!McpSchema.METHOD_TOOLS_CALL.equals(request.path("method").asText())) {
            return error(id, McpSchema.ErrorCodes.INTERNAL_ERROR, "the server is shutting down", null);
        }
        try {
            return toolResult(id, ServeTools.shuttingDown(), isModern(McpSchema.METHOD_TOOLS_CALL, request.get("params")));
        } catch (IOException e) {
            return error(id, McpSchema.ErrorCodes.INTERNAL_ERROR, "the server is shutting down", null);
        }
    }

    /** The answer to a tool call whose answer would be longer than one message may be. */
    String answerTooLarge(ObjectNode request, long size, long limit) {
        try {
            return toolResult(request.get("id"), ServeTools.answerTooLarge(size, limit),
                    isModern(request.path("method").asText(), request.get("params")));
        } catch (IOException e) {
            return error(request.get("id"), McpSchema.ErrorCodes.INTERNAL_ERROR, "cannot write the answer: " + e.getMessage(), null);
        }
    }


    /** Whether an answer to this request's call would only be seen by a client that closed its stream. */
    boolean isCancelled(Object callId) {
        return calls.isCancelled(callId);
    }

    void cancel(Object callId) {
        calls.cancel(callId);
    }

    private ObjectNode capabilities() {
        ObjectNode capabilities = Json.MAPPER.createObjectNode();
        // no session, so no notifications/tools/list_changed: tools/list's ttlMs says when to list again
        capabilities.putObject("tools").put("listChanged", false);
        capabilities.putObject("logging");
        return capabilities;
    }

    private ObjectNode serverInfo() {
        ObjectNode info = Json.MAPPER.createObjectNode();
        info.put("name", "execache");
        info.put("version", version);
        return info;
    }

    private String result(JsonNode id, ObjectNode result, boolean modern, String method) throws IOException {
        if (modern) {
            ObjectNode meta = result.get("_meta") instanceof ObjectNode given ? given : result.putObject("_meta");
            meta.set(SERVER_INFO_META, serverInfo());
            result.put("resultType", "complete");
            if (McpSchema.METHOD_TOOLS_LIST.equals(method) || DISCOVER.equals(method)) {
                if (!result.has("ttlMs")) {
                    result.put("ttlMs", 0);
                }
                result.put("cacheScope", "public");
            }
        }
        return response(id, Json.write(result));
    }

    /** The whole response to a tool call, for an answer made here (stopped, too large) rather than by a tool. */
    private String toolResult(JsonNode id, CallToolResult result, boolean modern) throws IOException {
        return response(id, write(result, modern));
    }

    /**
     * A tool's result as {@link #write} writes it, written once for a tool that gives the same
     * answer object again: a repeated hit of a gateway tool or of {@code execute_code} (see
     * {@link LastAnswer}), which is most of a hit's writing (#29).
     * An answer object is never changed once a handler has returned it.
     */
    private String resultText(String tool, CallToolResult result, boolean modern) throws IOException {
        Written last = lastWritten.get(tool);
        if (last != null && last.result() == result && last.modern() == modern) {
            return last.text();
        }
        String text = write(result, modern);
        if (text.length() <= KEPT_WRITTEN_CHARS) {
            lastWritten.put(tool, new Written(result, modern, text));
        }
        return text;
    }

    /**
     * A tool's result, written by the SDK's mapper (the content's type tags, and structured content
     * that may hold raw JSON of any depth, as {@link Json#rawJson} made it), with the era's fields.
     */
    private String write(CallToolResult result, boolean modern) throws IOException {
        if (!modern) {
            return mapper.writeValueAsString(result);
        }
        Map<String, Object> meta = new LinkedHashMap<>(result.meta() == null ? Map.of() : result.meta());
        meta.put(SERVER_INFO_META, Json.MAPPER.convertValue(serverInfo(), Map.class));
        String body = mapper.writeValueAsString(new CallToolResult(result.content(), result.isError(),
                result.structuredContent(), meta));
        return body.substring(0, body.lastIndexOf('}')) + ",\"resultType\":\"complete\"}";
    }

    /** A tool's answer and its text, in the era it was written for. */
    private record Written(CallToolResult result, boolean modern, String text) {
    }

    private static String response(JsonNode id, String result) {
        // an integer id is its digits, as the mapper writes it, without a writer made for them
        String written = id == null ? "null" : id.isIntegralNumber() ? id.asText() : Json.write(id);
        return "{\"jsonrpc\":\"2.0\",\"id\":" + written + ",\"result\":" + result + "}";
    }

    private String notFound(JsonNode id, String method) {
        return error(id, McpSchema.ErrorCodes.METHOD_NOT_FOUND, "Method not found: " + method, null);
    }

    private String unsupportedVersion(JsonNode id, String requested) {
        ObjectNode data = Json.MAPPER.createObjectNode();
        data.putArray("supported").add(MODERN);
        data.put("requested", requested);
        return error(id, UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version: " + requested
                + " (this server speaks " + MODERN + " per request, and " + String.join(", ", LEGACY)
                + " through initialize)", data);
    }

    static String error(JsonNode id, int code, String message, JsonNode data) {
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

    static LoggingLevel level(JsonNode level) {
        if (level == null || !level.isTextual() || !level.textValue().equals(level.textValue().toLowerCase(Locale.ROOT))) {
            return null;
        }
        return Arrays.stream(LoggingLevel.values()).filter(each -> each.name().equalsIgnoreCase(level.textValue()))
                .findFirst().orElse(null);
    }

    /** Sends a notification of a tool call to the stream of the request it belongs to. */
    private void route(String method, ObjectNode params) {
        JsonNode token = params.get("progressToken");
        Stream stream = token == null ? null : streams.get(token.asText());
        if (stream == null) {
            fallback.accept(method, params);
            return;
        }
        ObjectNode own = params.deepCopy();
        own.set("progressToken", stream.token());
        stream.sink().accept(method, own);
    }

    @Override
    public void close() {
        Logger.getLogger("dev.execache").removeHandler(logs);
    }

    private record Stream(JsonNode token, BiConsumer<String, ObjectNode> sink, LoggingLevel logLevel) {
    }

    /** What execache logs while a request runs goes to that request's stream, at the level it asked for. */
    private final class RequestLogs extends Handler {
        @Override
        public void publish(LogRecord record) {
            if (streams.isEmpty()) {
                return;
            }
            LoggingLevel level = McpStdioServer.level(record.getLevel());
            for (Stream stream : streams.values()) {
                if (stream.logLevel() != null && level.level() >= stream.logLevel().level()) {
                    ObjectNode params = Json.MAPPER.createObjectNode();
                    params.put("level", level.name().toLowerCase(Locale.ROOT));
                    params.put("logger", "execache");
                    params.put("data", record.getMessage());
                    stream.sink().accept("notifications/message", params);
                }
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    }
}
