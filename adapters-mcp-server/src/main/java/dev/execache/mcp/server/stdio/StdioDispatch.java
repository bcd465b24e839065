package dev.execache.mcp.server.stdio;

import dev.execache.gateway.InFlightCalls;
import dev.execache.gateway.Json;
import dev.execache.gateway.ServeTools;
import dev.execache.gateway.ServerFeatures;
import dev.execache.mcp.server.protocol.JsonRpc;
import dev.execache.mcp.server.protocol.ListenStreams;
import dev.execache.mcp.server.protocol.RelayedRequests;
import dev.execache.mcp.server.protocol.StatelessProtocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.core.Agents;
import dev.execache.core.spi.AgentRefusedException;
import dev.execache.core.spi.ToolCatalog;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * What each message read on stdio asks, and the state of the 2025 era's session, answered before the SDK's session
 * sees a message or past it: {@code ping} at any time; any other request of the 2025 era before
 * {@code notifications/initialized} is refused at once; {@code logging/setLevel} decides which log records are sent as
 * {@code notifications/message}; {@code notifications/cancelled} stops the call and no answer is sent for it (or ends
 * a {@code subscriptions/listen}, which writes its stream as lines, see {@link ListenStreams}); the requests of the
 * 2026-07-28 era, tool calls, tools/list and the servers' resources, prompts and completion are answered by
 * {@link StatelessProtocol}; the rest (initialize, notifications, the client's answers) go to the SDK's session
 * ({@link SdkSessionBridge}). The servers' requests to the client (sampling, elicitation, roots) are relayed from here.
 */
final class StdioDispatch implements StdioTransport.Dispatcher {
    private static final System.Logger LOG = System.getLogger("dev.execache.mcp.server");
    /** How long a server's request made before the client initialized waits for it (a server asks roots as it starts). */
    private static final Duration BEFORE_INITIALIZED = Duration.ofSeconds(60);

    private final StdioTransport framing;
    private final InFlightCalls calls;
    private volatile StatelessProtocol stateless;
    private volatile SdkSessionBridge session;
    private volatile boolean initialized;
    /** Null until the client sets a level: log messages go only to a client that asked for them. */
    private volatile McpSchema.LoggingLevel logLevel;
    /** Told each level the client sets (the gateway passes it on to its servers). */
    private volatile Consumer<McpSchema.LoggingLevel> levelSet = level -> { };
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

    /** The agent on stdio, one person's: it may be asked to have them sign in to a server again. */
    private final ToolCatalog.Agent personsAgent = new ToolCatalog.Agent() {
        @Override
        public String ask(String method, String params) {
            return askAgent(method, params);
        }

        @Override
        public boolean signsIn() {
            return true;
        }
    };

    StdioDispatch(StdioTransport framing, InFlightCalls calls) {
        this.framing = framing;
        this.calls = calls;
    }

    /** Answers the requests of the 2026-07-28 era, which need no session, and the others past the SDK's session. */
    void answerStatelessWith(StatelessProtocol protocol) {
        this.stateless = protocol;
    }

    /** Where the messages the SDK's session answers go. */
    void sessionWith(SdkSessionBridge bridge) {
        this.session = bridge;
    }

    /** Where the 2026-07-28 era's subscriptions/listen requests open their streams. */
    void listenWith(ListenStreams streams) {
        this.listens = streams;
    }

    /** Where the log levels the client sets go, besides this session's own log messages. */
    void onLogLevel(Consumer<McpSchema.LoggingLevel> sink) {
        this.levelSet = sink;
    }

    /** Where the client's notifications/roots/list_changed go. */
    void onRootsChanged(Runnable sink) {
        this.rootsChanged = sink;
    }

    /** Whether the client of the 2025 era sent notifications/initialized. */
    boolean initialized() {
        return initialized;
    }

    /** Runs {@code then} (on a thread of its own) once the client of the 2025 era sent notifications/initialized. */
    void onInitialized(Runnable then) {
        initializedOnce.thenRun(() -> {
            Thread thread = new Thread(then, "execache-initialized");
            thread.setDaemon(true);
            thread.start();
        });
    }

    /** Whether the client declared what {@code method} with {@code params} (JSON text) needs of it. */
    boolean declared(String method, String params) {
        return missingCapability(method, RelayedRequests.params(method, params)) == null;
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
            } catch (ExecutionException | TimeoutException e) {
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
                framing.writeOrFail(Json.write(request));
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
        framing.write(Json.write(message));
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

    /** Input ended: nobody is left to answer a server's request, and the listens end with it. */
    void inputEnded() {
        failAsked("the agent closed its input");
        ListenStreams streams = listens;
        if (streams != null) {
            streams.close(id -> null);
        }
    }

    /**
     * The server is stopping: every request still being computed gets an error that says so
     * (not one that blames the code), its run is stopped, and nothing more is read.
     */
    void shutDown() {
        framing.refuseUnanswered();
        failAsked("execache is stopping");
        ListenStreams streams = listens;
        if (streams != null) {
            // each listen ends with its answer: the subscription ended, not the connection lost
            streams.close(ListenStreams::endedAnswer);
        }
        calls.cancelAll();
        framing.pending().wake();
    }

    /** One message, read and checked by {@link JsonRpc}; {@code batch}: the batch it came in, or null. */
    @Override
    public void dispatch(String line, JsonRpc.Message message, AnswerBatch batch) {
        if (message instanceof JsonRpc.Invalid invalid) {
            LOG.log(Level.WARNING, invalid.message() + (invalid.fault() == JsonRpc.Fault.MESSAGE
                    ? " (" + (line.length() <= 80 ? line : line.substring(0, 77) + "...") + ")" : ""));
            if (batch != null) {
                batch.add(invalid.text());
            } else {
                framing.write(invalid.text());
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
            session.handle(line, null);
            return;
        }
        if (!(message instanceof JsonRpc.Request request)) {
            if (message instanceof JsonRpc.Response response && relayed.answered(response.id(), response.message())) {
                // the client's answer to a server's request that execache relayed
                return;
            }
            // a client's answer to a request of the session's
            session.handle(line, null);
            return;
        }
        Object id = request.idValue();
        String method = request.method();
        if (!request.modern() && !initialized && !McpSchema.METHOD_PING.equals(method)
                && !McpSchema.METHOD_INITIALIZE.equals(method)) {
            String problem = "Invalid Request: the session is not initialized; send initialize, then "
                    + "notifications/initialized, before " + method;
            LOG.log(Level.WARNING, problem);
            framing.deliver(id, JsonRpc.error(request.id(), McpSchema.ErrorCodes.INVALID_REQUEST, problem, null));
            return;
        }
        if (request.modern() && JsonRpc.LISTEN.equals(method)) {
            listen(request, batch != null);
            return;
        }
        if (request.modern() || McpSchema.METHOD_TOOLS_CALL.equals(method) || ServerFeatures.METHODS.contains(method)
                || JsonRpc.TASKS.contains(method) || McpSchema.METHOD_TOOLS_LIST.equals(method)) {
            // tools/list too: the SDK's tool type drops fields a server's tool may have (execution, say)
            // past the SDK's session: no reactive scheduling and no output schema check of our own tools' answers
            answerStateless(request, batch == null);
            return;
        }
        switch (method) {
            case McpSchema.METHOD_PING -> framing.deliver(id, StdioTransport.resultLine(id, Json.MAPPER.createObjectNode()));
            case McpSchema.METHOD_LOGGING_SET_LEVEL -> {
                logLevel = JsonRpc.level(request.params().get("level"));
                levelSet.accept(logLevel);
                framing.deliver(id, StdioTransport.resultLine(id, Json.MAPPER.createObjectNode()));
            }
            default -> {
                if (McpSchema.METHOD_INITIALIZE.equals(method)) {
                    clientName = Agents.name(request.params().at("/clientInfo/name").textValue());
                    JsonNode declared = request.params().get("capabilities");
                    clientCapabilities = declared instanceof ObjectNode ? declared : Json.MAPPER.createObjectNode();
                }
                session.handle(line, request);
            }
        }
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
        framing.pending().add(key, method);
        Runnable answer = () -> {
            try {
                // a server behind execache may ask the client something during a call of the initialize era
                ToolCatalog.Agent asker = request.modern() ? null : personsAgent;
                String line = stateless.answer(request, id, this::notifyStateless, clientName,
                        StatelessProtocol.Received.STDIO, asker);
                if (framing.pending().takeDropped(key)) {
                    return;
                }
                framing.deliver(id, StdioTransport.withinLimit(line, id, method,
                        size -> stateless.answerTooLarge(request, size, ServeTools.MAX_ANSWER_BYTES)));
            } catch (RuntimeException | Error e) {
                if (framing.pending().takeDropped(key)) {
                    return;
                }
                LOG.log(Level.WARNING, "answering " + method + " failed: " + e);
                framing.deliver(id, framing.stopping() ? stateless.shuttingDown(request)
                        : StdioTransport.errorLine(id, McpSchema.ErrorCodes.INTERNAL_ERROR, method + " failed: " + e.getMessage(), null));
            } finally {
                framing.answered(id);
            }
        };
        if (onReader) {
            framing.answerAfterLine(answer);
        } else {
            framing.answerElsewhere(answer);
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
                : listening.containsKey(key) || framing.pending().method(key) != null ? "Invalid Request: the id " + id
                        + " is in use by a request not answered yet" : null;
        if (refused != null) {
            LOG.log(Level.WARNING, refused);
            framing.deliver(id, JsonRpc.error(request.id(), streams == null ? McpSchema.ErrorCodes.METHOD_NOT_FOUND
                    : McpSchema.ErrorCodes.INVALID_REQUEST, refused, null));
            return;
        }
        LineNotificationStream[] opened = new LineNotificationStream[1];
        opened[0] = new LineNotificationStream(framing::write, () -> {
            listening.remove(key, opened[0]);
            streams.ended(opened[0]);
        });
        listening.put(key, opened[0]);
        if (!streams.listen(request.id(), (ObjectNode) request.params().get("notifications"), opened[0])) {
            listening.remove(key, opened[0]);
            framing.deliver(id, JsonRpc.error(request.id(), -32000, "Service Unavailable: " + ListenStreams.MAX_LISTENS
                    + " subscriptions/listen streams are open; cancel one first", null));
        }
    }

    private void cancel(JsonNode requestId) {
        if (requestId == null || !(requestId.isTextual() || requestId.isIntegralNumber())) {
            return;
        }
        Object key = InFlightCalls.key(JsonRpc.idValue(requestId));
        LineNotificationStream listen = listening.remove(key);
        if (listen != null) {
            // the client stops listening: no answer, and the servers' subscriptions nobody else holds end
            listen.end(null);
            return;
        }
        String method = framing.pending().method(key);
        if (method == null || McpSchema.METHOD_INITIALIZE.equals(method)) {
            // already answered, unknown, or initialize, which the spec says is never cancelled
            return;
        }
        framing.pending().drop(key);
        calls.cancel(key);
        framing.skipBatchOf(key);
        framing.pending().wake();
    }
}
