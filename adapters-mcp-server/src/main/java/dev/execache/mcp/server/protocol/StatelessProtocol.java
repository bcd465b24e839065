package dev.execache.mcp.server.protocol;

import dev.execache.gateway.Gateway;
import dev.execache.gateway.InFlightCalls;
import dev.execache.gateway.Json;
import dev.execache.gateway.OfferedTool;
import dev.execache.gateway.RequestOrigin;
import dev.execache.gateway.ServeTools;
import dev.execache.gateway.ServerFeatures;
import dev.execache.gateway.ServerTasks;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.core.Agents;
import dev.execache.core.spi.Telemetry;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.LoggingLevel;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import dev.execache.core.spi.ServerRefusedException;
import dev.execache.core.spi.ToolCatalog;
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
    private static final System.Logger LOG = System.getLogger("dev.execache.mcp.server");
    /** How long a client may keep the tool list: longer when it cannot change while serve runs. */
    private static final long FIXED_LIST_TTL_MS = 300_000;
    private static final long CHANGING_LIST_TTL_MS = 30_000;
    /** While a server is still starting its tools are yet to come: the client lists again soon. */
    private static final long STARTING_LIST_TTL_MS = 1_000;
    /** The resultType of a 2026-07-28 answer that needs the client's answers to the server's requests first. */
    private static final String INPUT_REQUIRED = "input_required";
    /** An agent's initialize request, for {@link #warmUp}. */
    private static final String WARM_UP_INITIALIZE = """
            {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",
             "capabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{},"url":{}}},
             "clientInfo":{"name":"warm-up","version":"1"}}}""";
    /** The longest answer text kept for a repeat of the same answer: a longer one is written each time. */
    private static final int KEPT_WRITTEN_CHARS = 128 * 1024;
    /** The 2026-07-28 era's error for a request that needs a client capability the client did not declare. */
    private static final int MISSING_CLIENT_CAPABILITY = -32021;

    private final McpJsonMapper mapper;
    private final ServeTools serveTools;
    private final String version;
    private final InFlightCalls calls;
    private final boolean listChanges;
    /** The gateway, whose servers may still be starting; null without one. */
    private final Gateway gateway;
    private final Map<String, OfferedTool> tools = new LinkedHashMap<>();
    private final BiConsumer<String, ObjectNode> fallback;
    private final Map<String, Stream> streams = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong();
    private final RequestLogs logs = new RequestLogs();
    /** Each tool's last answer and its text, for a repeat of the same answer (see {@link #resultText}). */
    private final Map<String, Written> lastWritten = new ConcurrentHashMap<>();
    /** Gateway calls of the 2026-07-28 era whose server asked the agent something, until the agent answers. */
    private final InputRounds rounds = new InputRounds();
    /** Whether the agent may be asked to have its person sign in to a server (stdio, see {@link #askAgentToSignIn}). */
    private volatile boolean signInThroughAgent;
    /** Whether the transport delivers list changes and resource updates (sessions' and listen streams). */
    private volatile boolean notifies;

    /**
     * @param fallback where notifications of requests that have no stream of their own go (the
     *     stdio session's, for its progress tokens)
     */
    public StatelessProtocol(ServeTools serveTools, String version, McpJsonMapper mapper, BiConsumer<String, ObjectNode> fallback) {
        this.mapper = mapper;
        this.serveTools = serveTools;
        this.version = version;
        this.calls = serveTools.calls();
        this.listChanges = serveTools.gateway() != null;
        this.gateway = serveTools.gateway();
        this.fallback = fallback;
        serveTools.specifications().forEach(spec -> tools.put(spec.tool().name(), spec));
        serveTools.notifyWith(this::route);
        Logger.getLogger("dev.execache").addHandler(logs);
        if (gateway != null) {
            // a server's log messages during a call of the 2026-07-28 era that asked for them go on the call's stream
            gateway.onServerLog(this::serverLogged);
        }
    }

    /**
     * The transport delivers the servers' list changes and resource updates (HTTP: 2025 sessions' streams; HTTP and
     * stdio: 2026-07-28 listen streams): initialize and server/discover declare them.
     */
    public void deliverNotifications() {
        notifies = gateway != null;
    }

    /**
     * The agent is one person's (stdio): a call of a tool of a server that waits for a person's sign-in
     * asks it to have them sign in (a URL-mode elicitation of the 2025-11-25 era). Not over HTTP, where
     * the servers' sign-ins would be shared by every agent.
     */
    public void askAgentToSignIn() {
        signInThroughAgent = true;
    }

    /**
     * Has Jackson build what the first answers need ({@link #warmUp}) on a thread of its own, while the servers behind
     * start: built on the way to an agent's first answers, it was CPU between the servers' answers and serve's.
     */
    public void warmUpSoon() {
        Thread thread = new Thread(() -> {
            try {
                warmUp();
            } catch (RuntimeException e) {
                // only ever a cost moved earlier: the first answers build the same on their way
                LOG.log(System.Logger.Level.DEBUG, "the warm-up stopped: " + e);
            }
        }, "execache-mcp-server-warm-up");
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * Writes the tools offered now as tools/list would, and reads an initialize request and writes its answer as the
     * SDK's session does, throwing all away: Jackson builds a type's serializer the first time it meets it.
     */
    void warmUp() {
        List<OfferedTool> offered;
        synchronized (this) {
            offered = List.copyOf(tools.values());
        }
        ObjectNode result = Json.MAPPER.createObjectNode();
        ArrayNode list = result.putArray("tools");
        offered.forEach(spec -> {
            list.add(Json.MAPPER.valueToTree(spec.tool()));
            // as the gateway offers a server's tools: from their definitions, as maps
            Json.MAPPER.convertValue(Json.MAPPER.convertValue(spec.tool(), Map.class), McpSchema.Tool.class);
        });
        Json.write(result);
        try {
            McpSchema.JSONRPCRequest initialize = (McpSchema.JSONRPCRequest) McpSchema.deserializeJsonRpcMessage(
                    mapper, WARM_UP_INITIALIZE);
            McpSchema.InitializeRequest request = mapper.convertValue(initialize.params(),
                    new TypeRef<McpSchema.InitializeRequest>() {
                    });
            mapper.writeValueAsString(new McpSchema.JSONRPCResponse(McpSchema.JSONRPC_VERSION, initialize.id(),
                    new McpSchema.InitializeResult(request.protocolVersion(), McpSchema.ServerCapabilities.builder()
                            .tools(true).resources(true, true).prompts(true).logging().completions().build(),
                            new McpSchema.Implementation("execache", version), "warm-up"), null));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Offers new or changed tools and withdraws others. */
    public synchronized void replaceTools(List<OfferedTool> changed, List<String> withdrawn) {
        withdrawn.forEach(tools::remove);
        withdrawn.forEach(lastWritten::remove);
        changed.forEach(spec -> {
            tools.put(spec.tool().name(), spec);
            lastWritten.remove(spec.tool().name());
        });
    }

    /**
     * The answer to one checked request (see {@link JsonRpc#read}), as JSON text.
     *
     * @param callId the id under which {@link InFlightCalls} knows a tool call, so that it can be cancelled
     * @param stream where this request's notifications (progress, logs) go; null: the fallback's
     * @param agent who asks, when the transport knows (a named token's name): counted before the envelope's
     *     client name; null: the client's name, else {@code unknown}
     */
    public String answer(JsonRpc.Request request, Object callId, BiConsumer<String, ObjectNode> stream, String agent) {
        return answer(request, callId, stream, agent, Received.STDIO, null);
    }

    /**
     * How a request arrived, besides its message: for its span.
     *
     * @param transport {@code network.transport}: {@code pipe} (stdio) or {@code tcp} (HTTP)
     * @param trace the W3C Trace Context of the HTTP request ({@code traceparent}, {@code tracestate}), the
     *     parent of the request's span when its {@code _meta} carries none; empty for none
     * @param protocolVersion the protocol version the transport saw (HTTP's {@code MCP-Protocol-Version}); null
     * @param person the person the transport authenticated (an OAuth access token's subject and the token); null
     * @param caller who the request's tasks belong to, as the transport tells callers apart (HTTP: the agent's
     *     token and its 2025 session); null where there is one caller (stdio)
     */
    public record Received(String transport, Map<String, String> trace, String protocolVersion,
            ToolCatalog.Person person, String caller) {
        public static final Received STDIO = new Received("pipe", Map.of(), null);

        public Received(String transport, Map<String, String> trace, String protocolVersion) {
            this(transport, trace, protocolVersion, null, null);
        }
    }

    /** As {@link #answer(JsonRpc.Request, Object, BiConsumer, String)}, arrived as {@code received}. */
    public String answer(JsonRpc.Request request, Object callId, BiConsumer<String, ObjectNode> stream, String agent,
            Received received) {
        return answer(request, callId, stream, agent, received, null);
    }

    /**
     * As {@link #answer(JsonRpc.Request, Object, BiConsumer, String)}, in a span of the request's own; a gateway
     * tool's server may ask {@code asker} something (sampling, elicitation, roots) while it answers the call; null:
     * nobody can be asked.
     */
    public String answer(JsonRpc.Request request, Object callId, BiConsumer<String, ObjectNode> stream, String agent,
            Received received, ToolCatalog.Agent asker) {
        Telemetry telemetry = serveTools.telemetry();
        if (telemetry == Telemetry.NONE) {
            return answerIn(Telemetry.Span.NONE, request, callId, stream, agent, asker, received);
        }
        String method = request.method();
        String target = McpSchema.METHOD_TOOLS_CALL.equals(method) || McpSchema.METHOD_PROMPT_GET.equals(method)
                ? request.params().path("name").textValue() : null;
        // the MCP semantic conventions: the context in params._meta is the parent, else the transport's
        Map<String, String> parent = TraceFields.of(request.params().get("_meta"));
        try (Telemetry.Span span = telemetry.start(target == null ? method : method + " " + target,
                Telemetry.Kind.SERVER, parent.isEmpty() ? received.trace() : parent)) {
            span.set("mcp.method.name", method)
                    .set("mcp.protocol.version", request.modern() ? JsonRpc.MODERN : received.protocolVersion())
                    .set("network.transport", received.transport());
            if (request.id() != null && !request.id().isNull()) {
                span.set("jsonrpc.request.id", request.id().asText());
            }
            if (McpSchema.METHOD_TOOLS_CALL.equals(method)) {
                span.set("gen_ai.tool.name", target).set("gen_ai.operation.name", "execute_tool");
            } else if (McpSchema.METHOD_PROMPT_GET.equals(method)) {
                span.set("gen_ai.prompt.name", target);
            }
            String answer = answerIn(span, request, callId, stream, agent, asker, received);
            String code = JsonRpc.errorCode(answer);
            if (code != null) {
                span.set("rpc.response.status_code", code);
                span.failed(code, null);
            }
            return answer;
        }
    }

    private String answerIn(Telemetry.Span span, JsonRpc.Request request, Object callId,
            BiConsumer<String, ObjectNode> stream, String agent, ToolCatalog.Agent asker, Received received) {
        JsonNode id = request.id();
        String method = request.method();
        ObjectNode params = request.params();
        boolean modern = request.modern();
        try {
            return switch (method) {
                case McpSchema.METHOD_PING -> result(id, Json.MAPPER.createObjectNode(), false, method);
                case JsonRpc.DISCOVER -> result(id, discover(), true, method);
                case McpSchema.METHOD_TOOLS_LIST -> result(id, toolList(modern), modern, method);
                case McpSchema.METHOD_TOOLS_CALL -> callTool(span, id, params, modern, callId, stream, agent, asker,
                        received.person(), received.caller());
                case McpSchema.METHOD_INITIALIZE -> initialize(id, params);
                // a stream, which the transport opens (ListenStreams) before a request gets here
                case JsonRpc.LISTEN -> JsonRpc.error(id, McpSchema.ErrorCodes.METHOD_NOT_FOUND, "Method not found: "
                        + method + " (no servers are configured under servers:, so nothing changes to listen for)",
                        null);
                // no session keeps the level: on HTTP a client sets it per request, in _meta
                case McpSchema.METHOD_LOGGING_SET_LEVEL -> result(id, Json.MAPPER.createObjectNode(), false, method);
                default -> ServerFeatures.METHODS.contains(method) ? serverFeature(request, agent, asker)
                        : JsonRpc.TASKS.contains(method) ? task(request, received.caller())
                        : JsonRpc.error(id, McpSchema.ErrorCodes.METHOD_NOT_FOUND, "Method not found: " + method, null);
            };
        } catch (IOException e) {
            return JsonRpc.error(id, McpSchema.ErrorCodes.INTERNAL_ERROR, "cannot write the answer: " + e.getMessage(), null);
        }
    }

    /**
     * A request of the servers' resources, prompts or completion, answered by the server that owns its subject, which
     * may ask {@code asker} something while it answers (null: nobody can be asked; an agent of the 2026-07-28 era gets
     * the server's {@code input_required} answer as it is).
     */
    private String serverFeature(JsonRpc.Request request, String agent, ToolCatalog.Agent asker) throws IOException {
        Gateway gateway = serveTools.gateway();
        if (gateway == null) {
            return JsonRpc.error(request.id(), McpSchema.ErrorCodes.METHOD_NOT_FOUND, "Method not found: "
                    + request.method() + " (no servers are configured under servers:)", null);
        }
        try {
            ObjectNode answer = Gateway.askingAgent(asker,
                    () -> gateway.features().answer(request.method(), request.params(), agent));
            if (INPUT_REQUIRED.equals(answer.path("resultType").textValue())) {
                if (!request.modern()) {
                    // its requests reach an agent of that era on the request's stream; this one has none
                    return JsonRpc.error(request.id(), McpSchema.ErrorCodes.INTERNAL_ERROR, "the server asks the agent"
                            + " something before it answers " + request.method() + ", and this request has no stream"
                            + " to ask it on (send it accepting text/event-stream)", null);
                }
                return JsonRpc.response(request.id(), Json.write(answer));
            }
            return result(request.id(), answer, request.modern(), request.method());
        } catch (ServerRefusedException e) {
            if (request.modern() && e.code() == ServerFeatures.RESOURCE_NOT_FOUND) {
                // the 2026-07-28 revision has no -32002: a resource nobody has is -32602 with its URI in data
                // (SEP-2164)
                ObjectNode data = Json.MAPPER.createObjectNode();
                data.set("uri", request.params().path("uri"));
                return JsonRpc.error(request.id(), McpSchema.ErrorCodes.INVALID_PARAMS, e.getMessage(), data);
            }
            return JsonRpc.error(request.id(), e.code(), e.getMessage(), null);
        }
    }

    /** A request of a server's task ({@link JsonRpc#TASKS}), answered by the server that made the task. */
    private String task(JsonRpc.Request request, String caller) throws IOException {
        if (gateway == null || !gateway.tasks().offered()) {
            return JsonRpc.error(request.id(), McpSchema.ErrorCodes.METHOD_NOT_FOUND, "Method not found: "
                    + request.method() + " (no server behind execache offers tasks)", null);
        }
        boolean modern = request.modern();
        if (modern && !declaresTasks(request.params())) {
            return missingTasksExtension(request.id());
        }
        String taskId = request.params().path("taskId").textValue();
        ServerTasks tasks = gateway.tasks();
        try {
            ObjectNode answer = switch (request.method()) {
                case "tasks/get" -> tasks.get(taskId, caller, modern);
                case "tasks/result" -> tasks.result(taskId, caller);
                case "tasks/list" -> tasks.list(caller);
                case "tasks/cancel" -> tasks.cancel(taskId, caller, modern);
                default -> tasks.update(taskId, caller);
            };
            return result(request.id(), answer, modern, request.method());
        } catch (ServerRefusedException e) {
            return JsonRpc.error(request.id(), e.code(), e.getMessage(), null);
        }
    }

    /** Whether a request of the 2026-07-28 era declares the tasks extension among its client capabilities. */
    private static boolean declaresTasks(JsonNode params) {
        return params.path("_meta").path(JsonRpc.CLIENT_CAPABILITIES_META).path("extensions").has(ServerTasks.EXTENSION);
    }

    /** The 2026-07-28 era's refusal of what needs the tasks extension from a client that did not declare it. */
    private static String missingTasksExtension(JsonNode id) {
        ObjectNode data = Json.MAPPER.createObjectNode();
        data.putObject("requiredCapabilities").putObject("extensions").putObject(ServerTasks.EXTENSION);
        return JsonRpc.error(id, MISSING_CLIENT_CAPABILITY, "Missing required client capability: the extension "
                + ServerTasks.EXTENSION, data);
    }

    private String initialize(JsonNode id, ObjectNode params) throws IOException {
        String requested = params.get("protocolVersion").textValue();
        ObjectNode result = Json.MAPPER.createObjectNode();
        result.put("protocolVersion", JsonRpc.LEGACY.contains(requested) ? requested : JsonRpc.LEGACY.get(0));
        result.set("capabilities", capabilities(false));
        result.set("serverInfo", serverInfo());
        result.put("instructions", serveTools.instructions());
        return result(id, result, false, McpSchema.METHOD_INITIALIZE);
    }

    private ObjectNode discover() {
        ObjectNode result = Json.MAPPER.createObjectNode();
        ArrayNode versions = result.putArray("supportedVersions");
        versions.add(JsonRpc.MODERN);
        JsonRpc.LEGACY.forEach(versions::add);
        result.set("capabilities", capabilities(true));
        result.set("serverInfo", serverInfo());
        // this era's tools/list answers at once (with a short ttlMs while a server starts): the servers' tools are
        // waited for here, so that the list asked next holds them
        result.put("instructions", serveTools.instructions(true));
        return result;
    }

    private ObjectNode toolList(boolean modern) {
        if (!modern && gateway != null && serveTools.listsServersTools()) {
            // the initialize era's list waits for the servers still starting, each at most its start time, on
            // stdio as over HTTP: a client that lists once and leaves (or opens no session stream) hears no
            // list_changed (the 2026-07-28 era gets a short ttlMs instead)
            try {
                gateway.awaitStartingServers();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        ObjectNode result = Json.MAPPER.createObjectNode();
        ArrayNode list = result.putArray("tools");
        List<OfferedTool> offered;
        synchronized (this) {
            offered = List.copyOf(tools.values());
        }
        // outside this object's lock: the gateway holds its own while it replaces the tools here
        offered.forEach(spec -> {
            if (!serveTools.lists(spec.tool().name())) {
                // code mode: the servers' tools are found by search_tools and called from code (or by name)
                return;
            }
            ObjectNode tool = Json.MAPPER.valueToTree(spec.tool());
            if (gateway != null) {
                gateway.unknownFields(spec.tool().name()).forEach((field, value) -> {
                    // the 2026-07-28 revision deleted a tool's execution (tasks left the protocol for an extension)
                    if (!tool.has(field) && !(modern && field.equals("execution"))) {
                        tool.set(field, Json.MAPPER.valueToTree(value));
                    }
                });
            }
            list.add(tool);
        });
        if (modern) {
            // in code mode the list is execache's own tools, whatever the servers do
            result.put("ttlMs", !listChanges || !serveTools.listsServersTools() ? FIXED_LIST_TTL_MS
                    : gateway.starting() ? STARTING_LIST_TTL_MS : CHANGING_LIST_TTL_MS);
        }
        return result;
    }

    /**
     * Why a {@code SERVER__TOOL} name is not offered when its server is down (its tools are unknown until it
     * starts): the reason serve logged, said to the agent too; else nothing.
     */
    private String whyNotOffered(String name) {
        if (gateway == null) {
            return "";
        }
        for (ToolCatalog.ServerStatus server : gateway.servers()) {
            if (server.state() == ToolCatalog.ServerStatus.State.UNAVAILABLE && name.startsWith(server.name() + "__")) {
                String named = "server " + server.name() + " ";
                // a url server's reason names the server already
                String reason = server.reason().startsWith(named) ? server.reason().substring(named.length())
                        : server.reason();
                return " (" + named + "is not available: " + reason + ")";
            }
        }
        return "";
    }

    private String callTool(Telemetry.Span span, JsonNode id, ObjectNode params, boolean modern, Object callId,
            BiConsumer<String, ObjectNode> stream, String agent, ToolCatalog.Agent asker, ToolCatalog.Person person,
            String caller)
            throws IOException {
        JsonNode arguments = params.get("arguments");
        String name = params.get("name").textValue();
        OfferedTool spec;
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
        if (spec == null && gateway != null && asker != null && signInThroughAgent && !modern) {
            // a tool of a server that waits for the person's sign-in: the agent is asked to have them sign in
            try {
                if (gateway.signInFor(name, asker)) {
                    synchronized (this) {
                        spec = tools.get(name);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return toolResult(id, ServeTools.shuttingDown(), modern);
            }
        }
        boolean unlisted = false;
        if (spec == null && gateway != null) {
            // a tool its server does not list: an agent may call it directly, so it may through execache
            spec = gateway.unlisted(name);
            unlisted = spec != null;
        }
        if (spec == null) {
            return JsonRpc.error(id, McpSchema.ErrorCodes.INVALID_PARAMS, "Unknown tool: " + name + whyNotOffered(name),
                    null);
        }
        if (gateway != null) {
            String asTask = callAsTask(id, params, modern, name, agent, caller);
            if (asTask != null) {
                return asTask;
            }
        }
        // a shallow copy: only its own keys change, the client's nodes are only read
        ObjectNode meta = Json.MAPPER.createObjectNode();
        if (params.get("_meta") instanceof ObjectNode given) {
            meta.setAll(given);
        }
        JsonNode token = meta.get("progressToken");
        String streamKey = null;
        if (stream != null) {
            streamKey = "execache-" + ids.incrementAndGet();
            McpSchema.LoggingLevel level = modern ? JsonRpc.level(meta.get(JsonRpc.LOG_LEVEL_META)) : null;
            String server = gateway == null ? null : gateway.serverOf(name);
            if (level != null && server != null) {
                // the server is asked to log from the call's level (or a lower one another agent asked for)
                gateway.logFrom(level);
            }
            streams.put(streamKey, new Stream(token, stream, level, server));
            if (token != null) {
                meta.put("progressToken", streamKey);
            }
        }
        // who calls goes beside the request, never in it: a client's _meta cannot name another agent
        RequestOrigin origin = new RequestOrigin(
                Agents.firstOf(agent, meta.path(JsonRpc.CLIENT_INFO_META).path("name").textValue()), callId, person);
        CallToolResult result;
        try {
            // the request's parts as the SDK's creator would get them, without a copy of the whole
            Function<JsonNode, Object> other = node -> mapper.convertValue(node, Object.class);
            CallToolRequest request = new CallToolRequest(name,
                    arguments == null || arguments.isNull() ? null : Json.plain((ObjectNode) arguments, other),
                    Json.plain(meta, other));
            OfferedTool called = spec;
            if (modern && gateway != null && (unlisted || gateway.offers(name))) {
                // the 2026-07-28 era asks the client only through an input_required result (see InputRounds)
                InputRounds.Step step;
                try {
                    JsonNode state = params.get("requestState");
                    step = state != null && state.isTextual() ? rounds.resume(state.textValue(), params.get("inputResponses"))
                            : null;
                    if (step == null) {
                        step = rounds.start(meta.get(JsonRpc.CLIENT_CAPABILITIES_META) instanceof ObjectNode declared
                                ? Json.write(declared) : null, givenAnswers(params),
                                asking -> Gateway.askingAgent(asking, () -> called.call(request, origin)));
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return toolResult(id, ServeTools.shuttingDown(), modern);
                }
                if (step instanceof InputRounds.Asked asked) {
                    return JsonRpc.response(id, inputRequired(asked));
                }
                result = ((InputRounds.Done) step).result();
            } else {
                result = Gateway.askingAgent(asker, () -> called.call(request, origin));
            }
            if (Boolean.TRUE.equals(result.isError())) {
                span.failed("tool_error", null);
            }
        } catch (ServerRefusedException e) {
            // the server refused the request itself (a client capability the agent did not declare, say): as it said
            JsonNode data = null;
            try {
                data = e.data() == null ? null : Json.MAPPER.readTree(e.data());
            } catch (IOException unreadable) {
                // said without its data
            }
            return JsonRpc.error(id, e.code(), e.getMessage(), data);
        } finally {
            if (streamKey != null) {
                streams.remove(streamKey);
            }
        }
        return JsonRpc.response(id, resultText(name, result, modern));
    }

    /**
     * A call of a tool whose server offers tasks, made a task: in the 2025-11-25 era when the call asks for one
     * ({@code task}), in the 2026-07-28 era when the tool must be one and the client declares the tasks extension (a
     * client that does not is refused, as SEP-2663 says); null for a plain call.
     */
    private String callAsTask(JsonNode id, ObjectNode params, boolean modern, String name, String agent, String caller)
            throws IOException {
        JsonNode task = params.get("task");
        if (!modern && (task == null || !task.isObject())) {
            return null;
        }
        // the cheap questions first: most calls are plain
        if (modern && !gateway.tasks().required(name) || !gateway.tasks().offers(name)) {
            return null;
        }
        if (modern && !declaresTasks(params)) {
            return missingTasksExtension(id);
        }
        String who = Agents.firstOf(agent, params.path("_meta").path(JsonRpc.CLIENT_INFO_META).path("name").textValue());
        ObjectNode answer;
        try {
            answer = gateway.tasks().call(name, params.get("arguments") instanceof ObjectNode given ? given : null,
                    modern ? null : task, caller, who, modern);
        } catch (ServerRefusedException e) {
            return JsonRpc.error(id, e.code(), e.getMessage(), null);
        }
        if (modern && "task".equals(answer.path("resultType").textValue())) {
            answer.putObject("_meta").set(JsonRpc.SERVER_INFO_META, serverInfo());
            return JsonRpc.response(id, Json.write(answer));
        }
        return result(id, answer, modern, McpSchema.METHOD_TOOLS_CALL);
    }

    /** The inputResponses and requestState a tool call carried, as JSON text; null for neither. */
    private static String givenAnswers(ObjectNode params) {
        ObjectNode given = Json.MAPPER.createObjectNode();
        for (String field : List.of("inputResponses", "requestState")) {
            if (params.has(field)) {
                given.set(field, params.get(field));
            }
        }
        return given.isEmpty() ? null : Json.write(given);
    }

    /** The answer to a request that was stopped because the server is stopping. */
    public String shuttingDown(JsonRpc.Request request) {
        JsonNode id = request.id();
        if (!McpSchema.METHOD_TOOLS_CALL.equals(request.method())) {
            return JsonRpc.error(id, McpSchema.ErrorCodes.INTERNAL_ERROR, "the server is shutting down", null);
        }
        try {
            return toolResult(id, ServeTools.shuttingDown(), request.modern());
        } catch (IOException e) {
            return JsonRpc.error(id, McpSchema.ErrorCodes.INTERNAL_ERROR, "the server is shutting down", null);
        }
    }

    /** The answer to a tool call whose answer would be longer than one message may be. */
    public String answerTooLarge(JsonRpc.Request request, long size, long limit) {
        try {
            return toolResult(request.id(), ServeTools.answerTooLarge(size, limit), request.modern());
        } catch (IOException e) {
            return JsonRpc.error(request.id(), McpSchema.ErrorCodes.INTERNAL_ERROR, "cannot write the answer: "
                    + e.getMessage(), null);
        }
    }


    /** Whether an answer to this request's call would only be seen by a client that closed its stream. */
    boolean isCancelled(Object callId) {
        return calls.isCancelled(callId);
    }

    public void cancel(Object callId) {
        calls.cancel(callId);
    }

    private ObjectNode capabilities(boolean modern) {
        ObjectNode capabilities = Json.MAPPER.createObjectNode();
        // list changes and resource updates only where the transport delivers them (HTTP with servers behind); else
        // tools/list's ttlMs says when to list again
        boolean delivered = notifies;
        capabilities.putObject("tools").put("listChanged", delivered);
        capabilities.putObject("logging");
        Set<String> offered = serveTools.gateway() == null ? Set.of() : serveTools.gateway().features().offered();
        if (offered.contains("resources")) {
            capabilities.putObject("resources").put("listChanged", delivered).put("subscribe", delivered);
        }
        if (offered.contains("prompts")) {
            capabilities.putObject("prompts").put("listChanged", delivered);
        }
        if (offered.contains("completions")) {
            capabilities.putObject("completions");
        }
        if (serveTools.gateway() != null && serveTools.gateway().tasks().offered()) {
            if (modern) {
                capabilities.putObject("extensions").putObject(ServerTasks.EXTENSION);
            } else {
                capabilities.set("tasks", legacyTasksCapability());
            }
        }
        return capabilities;
    }

    /** The 2025-11-25 era's experimental tasks capability, for tool calls: what execache passes on of the servers'. */
    public static ObjectNode legacyTasksCapability() {
        ObjectNode tasks = Json.MAPPER.createObjectNode();
        tasks.putObject("list");
        tasks.putObject("cancel");
        tasks.putObject("requests").putObject("tools").putObject("call");
        return tasks;
    }

    private ObjectNode serverInfo() {
        ObjectNode info = Json.MAPPER.createObjectNode();
        info.put("name", "execache");
        info.put("version", version);
        return info;
    }

    private String result(JsonNode id, ObjectNode result, boolean modern, String method) throws IOException {
        boolean cacheable = McpSchema.METHOD_TOOLS_LIST.equals(method) || JsonRpc.DISCOVER.equals(method)
                || JsonRpc.LISTS.contains(method);
        boolean read = McpSchema.METHOD_RESOURCES_READ.equals(method);
        if (modern) {
            ObjectNode meta = result.get("_meta") instanceof ObjectNode given ? given : result.putObject("_meta");
            meta.set(JsonRpc.SERVER_INFO_META, serverInfo());
            result.put("resultType", "complete");
            // the servers' own hints, made true for what execache answers (ServerFeatures), else stale at once; a
            // read not said otherwise may be the asker's own: not shared
            if ((cacheable || read) && !result.has("ttlMs")) {
                result.put("ttlMs", 0);
            }
            if ((cacheable || read) && !result.has("cacheScope")) {
                result.put("cacheScope", read ? "private" : "public");
            }
        } else if (cacheable || read || McpSchema.METHOD_PROMPT_GET.equals(method)) {
            // the initialize era has no such fields
            result.remove("ttlMs");
            result.remove("cacheScope");
        }
        return JsonRpc.response(id, Json.write(result));
    }

    /** The 2026-07-28 era's answer that the call needs the agent's answer to a server's request first. */
    private String inputRequired(InputRounds.Asked asked) {
        ObjectNode result = Json.MAPPER.createObjectNode();
        result.put("resultType", "input_required");
        result.set("inputRequests", asked.inputRequests());
        result.put("requestState", asked.state());
        result.putObject("_meta").set(JsonRpc.SERVER_INFO_META, serverInfo());
        return Json.write(result);
    }

    /** The whole response to a tool call, for an answer made here (stopped, too large) rather than by a tool. */
    private String toolResult(JsonNode id, CallToolResult result, boolean modern) throws IOException {
        return JsonRpc.response(id, write(result, modern));
    }

    /**
     * A tool's result as {@link #write} writes it, written once for a tool that gives the same
     * answer object again: a repeated hit of a gateway tool or of {@code execute_code} (see
     * {@code LastAnswer}), which is most of a hit's writing (#29).
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
        meta.put(JsonRpc.SERVER_INFO_META, Json.MAPPER.convertValue(serverInfo(), Map.class));
        String body = mapper.writeValueAsString(new CallToolResult(result.content(), result.isError(),
                result.structuredContent(), meta));
        return body.substring(0, body.lastIndexOf('}')) + ",\"resultType\":\"complete\"}";
    }

    /** A tool's answer and its text, in the era it was written for. */
    private record Written(CallToolResult result, boolean modern, String text) {
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

    /**
     * A request's stream: its progress token, where its notifications go, the log level it asked for (2026-07-28:
     * per request; null for none) and the server of the gateway tool it calls (null for none).
     */
    private record Stream(JsonNode token, BiConsumer<String, ObjectNode> sink, LoggingLevel logLevel, String server) {
    }

    /** A server's log message goes to the streams of the calls to it that asked for its level. */
    private void serverLogged(String server, ObjectNode message) {
        if (streams.isEmpty()) {
            return;
        }
        LoggingLevel level = JsonRpc.level(message.get("level"));
        if (level == null) {
            return;
        }
        for (Stream stream : streams.values()) {
            if (server.equals(stream.server()) && stream.logLevel() != null && level.level() >= stream.logLevel().level()) {
                stream.sink().accept(McpSchema.METHOD_NOTIFICATION_MESSAGE, message);
            }
        }
    }

    /** What execache logs while a request runs goes to that request's stream, at the level it asked for. */
    private final class RequestLogs extends Handler {
        @Override
        public void publish(LogRecord record) {
            if (streams.isEmpty()) {
                return;
            }
            LoggingLevel level = OwnLog.level(record.getLevel());
            for (Stream stream : streams.values()) {
                if (stream.logLevel() != null && level.level() >= stream.logLevel().level()) {
                    stream.sink().accept(McpSchema.METHOD_NOTIFICATION_MESSAGE, OwnLog.params(record));
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
