package dev.execache.mcp.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.core.Agents;
import dev.execache.core.spi.AgentRefusedException;
import dev.execache.core.spi.ToolCatalog;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpServerSession;
import io.modelcontextprotocol.spec.McpServerTransport;
import io.modelcontextprotocol.spec.McpServerTransportProvider;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import java.util.function.Supplier;
import reactor.core.publisher.Mono;

/**
 * MCP's stdio transport: newline-delimited JSON-RPC on a pair of streams, one session.
 *
 * <p>It stands in for the SDK's {@code StdioServerTransportProvider} (see
 * modelcontextprotocol/java-sdk #686), which stops reading at the first line it cannot parse
 * and, under concurrent tool calls, can drop a response when its outbound sink is contended
 * ("Failed to enqueue message"). Here a line that is not a JSON-RPC message gets a JSON-RPC
 * error and the session goes on; each message is written whole, under a lock, by the thread
 * that sends it. Requests are tracked until answered, so that at the end of input the session
 * ends only once every request read has its answer (or {@code drainLimit} has passed):
 * {@code printf '...' | execache serve} gets its answers.
 *
 * <p>It also answers what the SDK's session leaves waiting or gets wrong, before the session
 * sees it: {@code ping} at any time; any other request before {@code notifications/initialized}
 * is refused at once; unknown methods are refused at once; malformed {@code params} are
 * {@code -32602} naming the field; {@code logging/setLevel} is validated and decides which log
 * records are sent as {@code notifications/message}; batches are taken when the negotiated
 * version (2025-03-26) has them; {@code notifications/cancelled} stops the call and no answer
 * is sent for it. No answer line is longer than {@link ServeTools#MAX_ANSWER_BYTES}.
 */
final class StdioTransport implements McpServerTransportProvider {
    private static final System.Logger LOG = System.getLogger("dev.execache.mcp.server");
    private static final int MAX_LINE_BYTES = 16 * 1024 * 1024;
    private static final String BATCH_VERSION = "2025-03-26";
    /** How long a server's request made before the client initialized waits for it (a server asks roots as it starts). */
    private static final Duration BEFORE_INITIALIZED = Duration.ofSeconds(60);

    private final LineReader lines;
    private final LineWriter out;
    private final McpJsonMapper mapper;
    private final Duration drainLimit;
    private final InFlightCalls calls;
    private final PendingRequests pending = new PendingRequests();
    private final Map<Object, AnswerBatch> batches = new ConcurrentHashMap<>();
    private final AtomicBoolean closing = new AtomicBoolean();
    private final CompletableFuture<Void> ended = new CompletableFuture<>();
    /** Answer the calls of batches, and take over reading from a thread busy with a long call. */
    private final ExecutorService workers = Executors.newCachedThreadPool(task -> {
        Thread thread = new Thread(task, "execache-mcp-stdio");
        thread.setDaemon(true);
        return thread;
    });
    /** A call the thread reading now is to answer itself; only that thread uses it. */
    private Runnable readersCall;
    private final ReadingWatchdog handOff = new ReadingWatchdog(workers, this::readAll,
            () -> ended.isDone() || closing.get());
    private volatile StatelessProtocol stateless;
    private volatile McpServerSession session;
    private volatile boolean initialized;
    private volatile String protocolVersion;
    /** Null until the client sets a level: log messages go only to a client that asked for them. */
    private volatile McpSchema.LoggingLevel logLevel;
    /** Told each level the client sets (the gateway passes it on to its servers). */
    private volatile Consumer<McpSchema.LoggingLevel> levelSet = level -> { };
    /** Null: the SDK session's own (execache's, fixed when the server was built). */
    private volatile Supplier<String> instructions;
    /** What the client declared in initialize ({@code sampling}, {@code elicitation}, {@code roots}, ...); empty before. */
    private volatile JsonNode clientCapabilities = Json.MAPPER.createObjectNode();
    /** Completes when the client sent notifications/initialized: a server's request outside a call waits for it. */
    private final CompletableFuture<Void> initializedOnce = new CompletableFuture<>();
    /** The servers' requests relayed to the client and not answered yet. */
    private final RelayedRequests relayed = new RelayedRequests();
    /** Told when the client says its roots changed (the gateway tells its servers). */
    private volatile Runnable rootsChanged = () -> { };
    /** The name the client gave in initialize (its clientInfo), made plain; null before, or when it gave none. */
    private volatile String clientName;
    /** The 2026-07-28 era's subscriptions/listen streams; null without servers behind execache. */
    private volatile ListenStreams listens;
    /** This session's open listen streams, by their request's id, so that the client's cancel ends one. */
    private final Map<Object, LineNotificationStream> listening = new ConcurrentHashMap<>();

    StdioTransport(InputStream in, OutputStream out, McpJsonMapper mapper, Duration drainLimit, InFlightCalls calls) {
        this.out = new LineWriter(out);
        this.lines = new LineReader(in, MAX_LINE_BYTES, () -> {
            String problem = "Invalid Request: a message longer than " + MAX_LINE_BYTES + " bytes";
            LOG.log(Level.WARNING, problem);
            this.out.writeOrNote(errorLine(null, McpSchema.ErrorCodes.INVALID_REQUEST, problem, null));
        });
        this.mapper = mapper;
        this.drainLimit = drainLimit;
        this.calls = calls;
    }

    /** Answers the requests of the 2026-07-28 era, which need no session. */
    void answerStatelessWith(StatelessProtocol protocol) {
        this.stateless = protocol;
    }

    /** Where the 2026-07-28 era's subscriptions/listen requests open their streams. */
    void listenWith(ListenStreams streams) {
        this.listens = streams;
    }

    /** What initialize's answer says: execache's instructions and the servers' that are connected by then. */
    void instructWith(Supplier<String> instructions) {
        this.instructions = instructions;
    }

    /** Where the log levels the client sets go, besides this session's own log messages. */
    void onLogLevel(Consumer<McpSchema.LoggingLevel> sink) {
        this.levelSet = sink;
    }

    /** Where the client's notifications/roots/list_changed go. */
    void onRootsChanged(Runnable sink) {
        this.rootsChanged = sink;
    }

    /**
     * Relays a request of a server behind execache to the client (sampling, elicitation, roots) and waits for its
     * answer, for as long as the client (a person, perhaps) takes, until the call it belongs to ends: then the client
     * is sent notifications/cancelled for it. Before the session is initialized it waits for that, at most
     * {@link #BEFORE_INITIALIZED}.
     *
     * @return the client's result as JSON text
     * @throws AgentRefusedException with the client's error, or when the client did not declare the capability
     */
    String askAgent(String method, String params) {
        if (!initialized) {
            try {
                initializedOnce.get(BEFORE_INITIALIZED.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AgentRefusedException(McpSchema.ErrorCodes.INTERNAL_ERROR, "the call ended before the agent"
                        + " was asked " + method);
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                throw new AgentRefusedException(McpSchema.ErrorCodes.METHOD_NOT_FOUND, "no agent has initialized a"
                        + " session with execache that could answer " + method);
            }
        }
        JsonNode given = RelayedRequests.params(method, params);
        String missing = missingCapability(method, given);
        if (missing != null) {
            throw new AgentRefusedException(McpSchema.ErrorCodes.METHOD_NOT_FOUND, "the agent did not declare the "
                    + missing + " capability to execache, so it cannot be asked " + method);
        }
        return relayed.ask(method, given, request -> {
            try {
                out.write(Json.write(request));
            } catch (IOException e) {
                throw new AgentRefusedException(McpSchema.ErrorCodes.INTERNAL_ERROR, "cannot ask the agent " + method
                        + ": " + e.getMessage());
            }
        });
    }

    /** The capability the client must have declared for {@code method} that it did not; null when it did. */
    private String missingCapability(String method, JsonNode params) {
        JsonNode declared = clientCapabilities;
        return switch (method) {
            case McpSchema.METHOD_SAMPLING_CREATE_MESSAGE -> declared.has("sampling") ? null : "sampling";
            case McpSchema.METHOD_ROOTS_LIST -> declared.has("roots") ? null : "roots";
            case McpSchema.METHOD_ELICITATION_CREATE -> {
                JsonNode elicitation = declared.get("elicitation");
                boolean url = "url".equals(params.path("mode").asText());
                if (elicitation == null) {
                    yield "elicitation";
                }
                // an empty elicitation capability means form only
                yield url ? (elicitation.has("url") ? null : "elicitation (url)")
                        : (elicitation.isEmpty() || elicitation.has("form") ? null : "elicitation (form)");
            }
            default -> method;
        };
    }

    /** Completes when input has ended and every request read was answered (or the drain limit passed). */
    CompletableFuture<Void> ended() {
        return ended;
    }

    @Override
    public void setSessionFactory(McpServerSession.Factory sessionFactory) {
        session = sessionFactory.create(new SessionTransport());
        Thread reader = new Thread(this::readAll, "execache-mcp-stdin");
        reader.setDaemon(true);
        reader.start();
        handOff.start();
    }

    @Override
    public Mono<Void> notifyClients(String method, Object params) {
        McpServerSession current = session;
        // only to an initialized session: a client of the 2026-07-28 era gets only what it listens for
        return current == null || !initialized ? Mono.empty() : current.sendNotification(method, params);
    }

    @Override
    public Mono<Void> closeGracefully() {
        return Mono.defer(() -> {
            closing.set(true);
            McpServerSession current = session;
            return current == null ? Mono.empty() : current.closeGracefully();
        });
    }

    /** Sends a notification now, unless the session is not initialized yet. */
    void notify(String method, ObjectNode params) {
        if (initialized) {
            notifyStateless(method, params);
        }
    }

    /** Sends a notification of a request of the 2026-07-28 era, which has no session to wait for. */
    private void notifyStateless(String method, ObjectNode params) {
        ObjectNode message = Json.MAPPER.createObjectNode();
        message.put("jsonrpc", McpSchema.JSONRPC_VERSION);
        message.put("method", method);
        message.set("params", params);
        out.writeOrNote(Json.write(message));
    }

    private void failAsked(String why) {
        initializedOnce.completeExceptionally(new IOException(why));
        relayed.failAll(why);
    }

    /** Whether a log record of this level goes to the client, as set by logging/setLevel. */
    boolean logs(McpSchema.LoggingLevel level) {
        McpSchema.LoggingLevel wanted = logLevel;
        return initialized && wanted != null && level.level() >= wanted.level();
    }

    /**
     * The server is stopping: every request still being computed gets an error that says so
     * (not one that blames the code), its run is stopped, and nothing more is read.
     */
    void shutDown() {
        closing.set(true);
        for (Map.Entry<Object, String> request : pending.unanswered().entrySet()) {
            Object id = request.getKey();
            if (!pending.claim(id)) {
                continue;
            }
            if (McpSchema.METHOD_TOOLS_CALL.equals(request.getValue())) {
                deliver(id, resultLine(id, ServeTools.shuttingDown()));
            } else {
                deliver(id, errorLine(id, McpSchema.ErrorCodes.INTERNAL_ERROR, "the server is shutting down", null));
            }
        }
        failAsked("execache is stopping");
        ListenStreams streams = listens;
        if (streams != null) {
            // each listen ends with its answer: the subscription ended, not the connection lost
            streams.close(ListenStreams::endedAnswer);
        }
        calls.cancelAll();
        pending.wake();
    }

    /**
     * Reads and dispatches lines until input ends. A tool call is answered by the thread that read
     * it, until {@link ReadingWatchdog} hands reading on to another thread.
     */
    private void readAll() {
        try {
            byte[] line;
            while (!closing.get() && (line = lines.readLine()) != null) {
                String text = new String(line, StandardCharsets.UTF_8).strip();
                if (!text.isEmpty() && !closing.get()) {
                    dispatch(text);
                }
                Runnable call = readersCall;
                if (call != null) {
                    readersCall = null;
                    if (!handOff.answerWhileReading(call)) {
                        // reading went on in another thread meanwhile
                        return;
                    }
                }
            }
        } catch (IOException e) {
            if (!closing.get()) {
                LOG.log(Level.WARNING, "reading standard input failed: " + e.getMessage());
            }
        }
        failAsked("the agent closed its input");
        ListenStreams streams = listens;
        if (streams != null) {
            streams.close(id -> null);
        }
        pending.awaitAnswers(drainLimit);
        ended.complete(null);
    }

    private void dispatch(String line) {
        JsonRpc.Message message = JsonRpc.parse(line, "line");
        if (message instanceof JsonRpc.Batch batch) {
            dispatchBatch(batch.items());
        } else {
            dispatchOne(line, message, null);
        }
    }

    private void dispatchBatch(ArrayNode items) {
        if (!BATCH_VERSION.equals(protocolVersion) || items.isEmpty()) {
            String problem = items.isEmpty() ? "Invalid Request: an empty batch"
                    : "Invalid Request: batches are part of protocol version " + BATCH_VERSION + " only, not "
                            + (protocolVersion == null ? "before initialize" : protocolVersion);
            LOG.log(Level.WARNING, problem);
            out.writeOrNote(JsonRpc.error(null, McpSchema.ErrorCodes.INVALID_REQUEST, problem, null));
            return;
        }
        List<JsonRpc.Message> messages = new ArrayList<>();
        AnswerBatch collected = new AnswerBatch(out::writeOrNote);
        for (JsonNode item : items) {
            JsonRpc.Message message = item instanceof ObjectNode ? JsonRpc.read(item)
                    : new JsonRpc.Invalid(null, null, McpSchema.ErrorCodes.INVALID_REQUEST,
                            "Invalid Request: a batch item must be an object", null, JsonRpc.Fault.MESSAGE, false);
            if (message instanceof JsonRpc.Request || message instanceof JsonRpc.Invalid) {
                collected.expect();
            }
            messages.add(message);
        }
        for (int i = 0; i < messages.size(); i++) {
            dispatchOne(Json.write(items.get(i)), messages.get(i), collected);
        }
    }

    /** One message, read and checked by {@link JsonRpc}; {@code batch}: the batch it came in, or null. */
    private void dispatchOne(String line, JsonRpc.Message message, AnswerBatch batch) {
        if (message instanceof JsonRpc.Invalid invalid) {
            LOG.log(Level.WARNING, invalid.message() + (invalid.fault() == JsonRpc.Fault.MESSAGE
                    ? " (" + (line.length() <= 80 ? line : line.substring(0, 77) + "...") + ")" : ""));
            if (batch != null) {
                batch.add(invalid.text());
            } else {
                out.writeOrNote(invalid.text());
            }
            return;
        }
        if (message instanceof JsonRpc.Notification notification) {
            if (JsonRpc.CANCELLED.equals(notification.method())) {
                cancel(notification.params().get("requestId"));
                return;
            }
            if (McpSchema.METHOD_NOTIFICATION_INITIALIZED.equals(notification.method())) {
                initialized = true;
                initializedOnce.complete(null);
            }
            if (McpSchema.METHOD_NOTIFICATION_ROOTS_LIST_CHANGED.equals(notification.method())) {
                rootsChanged.run();
            }
            toSession(line, null);
            return;
        }
        if (!(message instanceof JsonRpc.Request request)) {
            if (message instanceof JsonRpc.Response response && relayed.answered(response.id(), response.message())) {
                // the client's answer to a server's request that execache relayed
                return;
            }
            // a client's answer to a request of the session's
            toSession(line, null);
            return;
        }
        Object id = request.idValue();
        if (batch != null) {
            batches.put(InFlightCalls.key(id), batch);
        }
        String method = request.method();
        if (!request.modern() && !initialized && !McpSchema.METHOD_PING.equals(method)
                && !McpSchema.METHOD_INITIALIZE.equals(method)) {
            String problem = "Invalid Request: the session is not initialized; send initialize, then "
                    + "notifications/initialized, before " + method;
            LOG.log(Level.WARNING, problem);
            deliver(id, JsonRpc.error(request.id(), McpSchema.ErrorCodes.INVALID_REQUEST, problem, null));
            return;
        }
        if (request.modern() && JsonRpc.LISTEN.equals(method)) {
            listen(request, batch != null);
            return;
        }
        if (request.modern() || McpSchema.METHOD_TOOLS_CALL.equals(method) || ServerFeatures.METHODS.contains(method)
                || McpSchema.METHOD_TOOLS_LIST.equals(method)) {
            // tools/list too: the SDK's tool type drops fields a server's tool may have (execution, say)
            // past the SDK's session: no reactive scheduling and no output schema check of our own tools' answers
            answerStateless(request, batch == null);
            return;
        }
        switch (method) {
            case McpSchema.METHOD_PING -> deliver(id, resultLine(id, Json.MAPPER.createObjectNode()));
            case McpSchema.METHOD_LOGGING_SET_LEVEL -> {
                logLevel = JsonRpc.level(request.params().get("level"));
                levelSet.accept(logLevel);
                deliver(id, resultLine(id, Json.MAPPER.createObjectNode()));
            }
            default -> {
                if (McpSchema.METHOD_INITIALIZE.equals(method)) {
                    clientName = Agents.name(request.params().at("/clientInfo/name").textValue());
                    JsonNode declared = request.params().get("capabilities");
                    clientCapabilities = declared instanceof ObjectNode ? declared : Json.MAPPER.createObjectNode();
                }
                toSession(line, request);
            }
        }
    }

    /** A message the SDK's session answers: the 2025 era's initialize and tools/list, notifications, responses. */
    private void toSession(String line, JsonRpc.Request request) {
        McpSchema.JSONRPCMessage parsed;
        try {
            parsed = McpSchema.deserializeJsonRpcMessage(mapper, line);
        } catch (Exception e) {
            String problem = "Invalid Request: not a JSON-RPC 2.0 request, notification or response";
            LOG.log(Level.WARNING, problem + " (" + (line.length() <= 80 ? line : line.substring(0, 77) + "...") + ")");
            if (request != null) {
                deliver(request.idValue(), JsonRpc.error(request.id(), McpSchema.ErrorCodes.INVALID_REQUEST, problem, null));
            }
            return;
        }
        if (request != null) {
            pending.add(InFlightCalls.key(request.idValue()), request.method());
        }
        session.handle(parsed).subscribe(null,
                error -> LOG.log(Level.WARNING, "handling a message failed: " + error.getMessage()));
    }

    /**
     * A request of the 2026-07-28 era, or a tool call of either era: answered from its own envelope, past the SDK
     * session, on the reader thread (see {@link #readAll}) unless it came in a batch, with
     * no session; notifications/cancelled and a shutdown stop it as they stop a session's calls.
     */
    private void answerStateless(JsonRpc.Request request, boolean onReader) {
        Object id = request.idValue();
        String method = request.method();
        Object key = InFlightCalls.key(id);
        pending.add(key, method);
        Runnable answer = () -> {
            try {
                // a server behind execache may ask the client something during a call of the initialize era
                ToolCatalog.Agent asker = request.modern() ? null : this::askAgent;
                String line = stateless.answer(request, id, this::notifyStateless, clientName,
                        StatelessProtocol.Received.STDIO, asker);
                if (pending.takeDropped(key)) {
                    return;
                }
                deliver(id, withinLimit(line, id, method,
                        size -> stateless.answerTooLarge(request, size, ServeTools.MAX_ANSWER_BYTES)));
            } catch (RuntimeException | Error e) {
                if (pending.takeDropped(key)) {
                    return;
                }
                LOG.log(Level.WARNING, "answering " + method + " failed: " + e);
                deliver(id, closing.get() ? stateless.shuttingDown(request)
                        : errorLine(id, McpSchema.ErrorCodes.INTERNAL_ERROR, method + " failed: " + e.getMessage(), null));
            } finally {
                answered(id);
            }
        };
        if (onReader) {
            readersCall = answer;
        } else {
            workers.execute(answer);
        }
    }

    /**
     * A 2026-07-28 subscriptions/listen: its stream is this session's output, its messages tagged with its id; it has
     * no answer until serve stops (an empty result), and ends without one when the client cancels it.
     */
    private void listen(JsonRpc.Request request, boolean inBatch) {
        Object id = request.idValue();
        Object key = InFlightCalls.key(id);
        ListenStreams streams = listens;
        String refused = streams == null ? "Method not found: " + JsonRpc.LISTEN + " (no servers are configured under"
                + " servers:, so nothing changes to listen for)"
                : inBatch ? "Invalid Request: " + JsonRpc.LISTEN + " cannot come in a batch: it is answered by a stream"
                : listening.containsKey(key) || pending.method(key) != null ? "Invalid Request: the id " + id
                        + " is in use by a request not answered yet" : null;
        if (refused != null) {
            LOG.log(Level.WARNING, refused);
            deliver(id, JsonRpc.error(request.id(), streams == null ? McpSchema.ErrorCodes.METHOD_NOT_FOUND
                    : McpSchema.ErrorCodes.INVALID_REQUEST, refused, null));
            return;
        }
        LineNotificationStream[] opened = new LineNotificationStream[1];
        opened[0] = new LineNotificationStream(out::writeOrNote, () -> {
            listening.remove(key, opened[0]);
            streams.ended(opened[0]);
        });
        listening.put(key, opened[0]);
        if (!streams.listen(request.id(), (ObjectNode) request.params().get("notifications"), opened[0])) {
            listening.remove(key, opened[0]);
            deliver(id, JsonRpc.error(request.id(), -32000, "Service Unavailable: " + ListenStreams.MAX_LISTENS
                    + " subscriptions/listen streams are open; cancel one first", null));
        }
    }

    private void cancel(JsonNode requestId) {
        if (requestId == null || !(requestId.isTextual() || requestId.isIntegralNumber())) {
            return;
        }
        Object key = InFlightCalls.key(idOf(requestId));
        LineNotificationStream listen = listening.remove(key);
        if (listen != null) {
            // the client stops listening: no answer, and the servers' subscriptions nobody else holds end
            listen.end(null);
            return;
        }
        String method = pending.method(key);
        if (method == null || McpSchema.METHOD_INITIALIZE.equals(method)) {
            // already answered, unknown, or initialize, which the spec says is never cancelled
            return;
        }
        pending.drop(key);
        calls.cancel(key);
        AnswerBatch batch = batches.remove(key);
        if (batch != null) {
            batch.skip();
        }
        pending.wake();
    }

    private static Object idOf(JsonNode id) {
        return JsonRpc.idValue(id);
    }

    private static String errorLine(Object id, int code, String message, String data) {
        ObjectNode response = Json.MAPPER.createObjectNode();
        response.put("jsonrpc", McpSchema.JSONRPC_VERSION);
        response.set("id", Json.MAPPER.valueToTree(id));
        ObjectNode error = response.putObject("error");
        error.put("code", code);
        error.put("message", message);
        if (data != null) {
            error.put("data", data);
        }
        return Json.write(response);
    }

    private String resultLine(Object id, Object result) {
        ObjectNode response = Json.MAPPER.createObjectNode();
        response.put("jsonrpc", McpSchema.JSONRPC_VERSION);
        response.set("id", Json.MAPPER.valueToTree(id));
        response.set("result", Json.MAPPER.valueToTree(result));
        return Json.write(response);
    }

    /** Writes the answer to request {@code id}, as part of its batch when it came in one. */
    private void deliver(Object id, String line) {
        AnswerBatch batch = id == null ? null : batches.remove(InFlightCalls.key(id));
        if (batch != null) {
            batch.add(line);
        } else {
            out.writeOrNote(line);
        }
    }

    private void answered(Object id) {
        pending.answered(InFlightCalls.key(id));
    }

    /**
     * The answer line, or, when it is longer than {@link ServeTools#MAX_ANSWER_BYTES}, an error
     * instead: for a tool call the result {@code tooLarge} gives for its size.
     */
    private static String withinLimit(String line, Object id, String method, IntFunction<String> tooLarge) {
        // a line of fewer characters than a sixth of the limit is within it, whatever they are
        int size = line.length() > ServeTools.MAX_ANSWER_BYTES / 6
                ? JsonText.escapeLoneSurrogates(line).getBytes(StandardCharsets.UTF_8).length : 0;
        if (size <= ServeTools.MAX_ANSWER_BYTES) {
            return line;
        }
        LOG.log(Level.WARNING, "an answer of " + size + " bytes is over the limit of "
                + ServeTools.MAX_ANSWER_BYTES + " bytes; sent an error instead");
        return McpSchema.METHOD_TOOLS_CALL.equals(method) ? tooLarge.apply(size)
                : errorLine(id, McpSchema.ErrorCodes.INTERNAL_ERROR, "the answer is " + size
                        + " bytes, over the limit of " + ServeTools.MAX_ANSWER_BYTES + " bytes", null);
    }

    private final class SessionTransport implements McpServerTransport {
        @Override
        public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
            return Mono.fromRunnable(() -> {
                if (!(message instanceof McpSchema.JSONRPCResponse response)) {
                    out.writeOrNote(serialize(message));
                    return;
                }
                Object key = InFlightCalls.key(response.id());
                if (pending.takeDropped(key)) {
                    // cancelled, or already answered because the server is shutting down
                    batches.remove(key);
                    return;
                }
                String method = pending.method(key);
                try {
                    McpSchema.JSONRPCResponse answer = response;
                    if (McpSchema.METHOD_INITIALIZE.equals(method)
                            && response.result() instanceof McpSchema.InitializeResult result) {
                        protocolVersion = result.protocolVersion();
                        Supplier<String> current = instructions;
                        if (current != null) {
                            // the servers behind the gateway join after the SDK's server was built
                            answer = new McpSchema.JSONRPCResponse(response.jsonrpc(), response.id(),
                                    new McpSchema.InitializeResult(result.protocolVersion(), result.capabilities(),
                                            result.serverInfo(), current.get(), result.meta()), null);
                        }
                    }
                    deliver(response.id(), withinLimit(serialize(answer), response.id(), method, size -> resultLine(
                            response.id(), ServeTools.answerTooLarge(size, ServeTools.MAX_ANSWER_BYTES))));
                } finally {
                    answered(response.id());
                }
            });
        }

        private String serialize(McpSchema.JSONRPCMessage message) {
            try {
                return mapper.writeValueAsString(message);
            } catch (IOException e) {
                throw new IllegalStateException("cannot write a message: " + e.getMessage(), e);
            }
        }

        @Override
        public <T> T unmarshalFrom(Object data, TypeRef<T> typeRef) {
            return mapper.convertValue(data, typeRef);
        }

        @Override
        public Mono<Void> closeGracefully() {
            return Mono.fromRunnable(() -> closing.set(true));
        }
    }
}
