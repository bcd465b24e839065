package dev.execache.mcp.server.http;

import dev.execache.gateway.InFlightCalls;
import dev.execache.gateway.Json;
import dev.execache.mcp.server.protocol.JsonRpc;
import dev.execache.mcp.server.protocol.ListenStreams;
import dev.execache.mcp.server.protocol.RelayedRequests;
import dev.execache.mcp.server.protocol.StatelessProtocol;
import dev.execache.mcp.server.protocol.TraceFields;

import static dev.execache.mcp.server.http.HttpReplies.accepted;
import static dev.execache.mcp.server.http.HttpReplies.refuse;
import static dev.execache.mcp.server.http.HttpReplies.sendJson;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.core.spi.AgentRefusedException;
import dev.execache.core.spi.ServerRefusedException;
import dev.execache.core.spi.ToolCatalog;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.io.InputStream;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * A POST to /mcp that passed {@link RequestChecks}: its body read and answered by {@link
 * StatelessProtocol}, as JSON, or for a tool call whose client takes it as an SSE stream that
 * carries its progress (and the servers' requests to the client, in the initialize era). A client
 * that closes that stream cancels the call.
 */
final class McpPost extends Handler.Abstract {
    private static final System.Logger LOG = System.getLogger("dev.execache.mcp.server");
    /** The request attribute that carries the caller of an MCP request from the checks to its answer. */
    static final String CALLER = HttpAccess.Caller.class.getName();
    /** The request attribute that says a POST came past the bound on requests at once, as a subscriptions/listen. */
    static final String LISTEN_ROUTE = McpPost.class.getName() + ".listen";
    /** The request attribute that carries the 2025-era session a request names, once found. */
    private static final String SESSION = McpPost.class.getName() + ".session";
    /** How often a running tool call's stream is written to, so that a client gone is noticed. */
    private static final Duration HEARTBEAT = Duration.ofMillis(250);
    private static final Duration FIRST_MODERN_HEARTBEAT = Duration.ofSeconds(2);
    /** The 2026-07-28 error of a request that needs a client capability its client did not declare. */
    private static final String MISSING_CLIENT_CAPABILITY = "-32021";

    private final StatelessProtocol protocol;
    private final HttpAccess access;
    private final int maxBodyBytes;
    private final BooleanSupplier stopping;
    /** The servers' notifications to agents (2025 sessions, 2026-07-28 listen streams); null without servers. */
    private final HttpNotifications notifications;
    private final AtomicLong callIds = new AtomicLong();
    /**
     * The tool calls being answered in 2025-era sessions, by session, caller and request id, to their call ids: a
     * client that cancels a call POSTs notifications/cancelled naming the request id, which means something only
     * within its session (and only its own calls may be cancelled).
     */
    private final Map<SessionCall, String> sessionCalls = new ConcurrentHashMap<>();
    /** The servers' requests relayed to clients on tool calls' streams, until a client POSTs the answer. */
    private final RelayedRequests relayed = new RelayedRequests();
    private final ScheduledExecutorService heartbeats = Executors.newSingleThreadScheduledExecutor(task -> {
        Thread thread = new Thread(task, "execache-http-heartbeat");
        thread.setDaemon(true);
        return thread;
    });

    /** @param stopping whether the server is stopping (a call that fails then is answered that it is shutting down) */
    McpPost(StatelessProtocol protocol, HttpAccess access, int maxBodyBytes, BooleanSupplier stopping) {
        this(protocol, access, maxBodyBytes, stopping, null);
    }

    /** @param notifications the servers' notifications to agents; null without servers behind execache */
    McpPost(StatelessProtocol protocol, HttpAccess access, int maxBodyBytes, BooleanSupplier stopping,
            HttpNotifications notifications) {
        this.protocol = protocol;
        this.access = access;
        this.maxBodyBytes = maxBodyBytes;
        this.stopping = stopping;
        this.notifications = notifications;
    }

    /** Whether the client takes an SSE stream (a tool call's answer then carries its progress). */
    static boolean streams(Request request) {
        String accept = request.getHeaders().get(HttpHeader.ACCEPT);
        return accept != null && accept.toLowerCase(Locale.ROOT).contains("text/event-stream");
    }

    static boolean tooLarge(Response response, Callback callback, int maxBodyBytes) {
        return refuse(response, callback, 413, McpSchema.ErrorCodes.INVALID_REQUEST, "Content Too Large: a body "
                + "is at most " + maxBodyBytes + " bytes");
    }

    /** The servers' requests still waiting for a client's answer fail with {@code why}. */
    void failRelayed(String why) {
        relayed.failAll(why);
    }

    /** Stops the heartbeats of the streams (once the server has stopped). */
    void close() {
        heartbeats.shutdownNow();
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        try {
            byte[] body = readBody(request);
            if (body == null) {
                tooLarge(response, callback, maxBodyBytes);
            } else {
                answer(request, response, callback, body, streams(request),
                        (HttpAccess.Caller) request.getAttribute(CALLER));
            }
        } catch (IOException e) {
            callback.failed(e);
        }
        return true;
    }

    /** The body, or null when it is longer than the limit. */
    private byte[] readBody(Request request) throws IOException {
        try (InputStream in = Content.Source.asInputStream(request)) {
            byte[] body = in.readNBytes(maxBodyBytes + 1);
            return body.length > maxBodyBytes ? null : body;
        }
    }

    private void answer(Request request, Response response, Callback callback, byte[] body, boolean streams,
            HttpAccess.Caller caller) throws IOException {
        JsonRpc.Message message = JsonRpc.parse(new String(body, StandardCharsets.UTF_8), "body");
        if (message instanceof JsonRpc.Batch) {
            refuse(response, callback, 400, McpSchema.ErrorCodes.INVALID_REQUEST,
                    "Invalid Request: JSON-RPC batches are not taken over HTTP; send one message per POST");
            return;
        }
        if (message instanceof JsonRpc.Invalid invalid && invalid.fault() == JsonRpc.Fault.MESSAGE) {
            refuse(response, callback, 400, invalid.code(), invalid.message());
            return;
        }
        if (message instanceof JsonRpc.Response answered) {
            // a client's answer to a server's request relayed on a tool call's stream, if it is one
            relayed.answered(answered.id(), answered.message());
            accepted(response, callback);
            return;
        }
        ObjectNode object = message instanceof JsonRpc.Request checked ? checked.message()
                : message instanceof JsonRpc.Notification notification ? notification.message()
                : ((JsonRpc.Invalid) message).source();
        boolean isRequest = !(message instanceof JsonRpc.Notification);
        HeaderCheck check = HeaderCheck.of(request, object, isRequest);
        if (check != null) {
            JsonNode id = isRequest ? object.get("id") : null;
            sendJson(response, callback, 400, JsonRpc.error(id, check.code(), check.message(), check.data()));
            return;
        }
        if (message instanceof JsonRpc.Invalid invalid) {
            int status = invalid.fault() == JsonRpc.Fault.ENVELOPE ? 400
                    : invalid.fault() == JsonRpc.Fault.METHOD && invalid.modern() ? 404 : 200;
            sendJson(response, callback, status, invalid.text());
            return;
        }
        if (!(message instanceof JsonRpc.Request checked)) {
            if (message instanceof JsonRpc.Notification notification && JsonRpc.CANCELLED.equals(notification.method())) {
                cancelInSession(request, notification, caller);
            }
            accepted(response, callback);
            return;
        }
        String method = checked.method();
        if (request.getAttribute(LISTEN_ROUTE) != null && !JsonRpc.LISTEN.equals(method)) {
            sendJson(response, callback, 400, JsonRpc.error(checked.id(), JsonRpc.HEADER_MISMATCH, "Bad Request: the "
                    + "Mcp-Method header names " + JsonRpc.LISTEN + " but the body names method " + method, null));
            return;
        }
        Scope needed = Scope.neededFor(method, checked.params());
        if (!caller.may(needed)) {
            refuse(response, callback, access.insufficient(caller, needed));
            return;
        }
        String callId = "http-" + callIds.incrementAndGet();
        String agent = caller.agent();
        if (needed == Scope.ADMIN) {
            // what changes the cache for everyone says who asked for it
            LOG.log(Level.INFO, (agent == null ? "a client" : "agent " + agent) + " calls "
                    + checked.params().path("name").asText() + ", which changes the shared cache");
        }
        if (notifications != null && sessional(request, response, callback, checked, streams, caller)) {
            return;
        }
        if (notifications == null && JsonRpc.LISTEN.equals(method)) {
            sendJson(response, callback, 404, JsonRpc.error(checked.id(), McpSchema.ErrorCodes.METHOD_NOT_FOUND,
                    "Method not found: " + method + " (no servers are configured under servers:, so nothing changes"
                    + " to listen for)", null));
            return;
        }
        SessionCall sessionCall = sessionCall(request, checked, caller);
        if (sessionCall != null) {
            sessionCalls.put(sessionCall, callId);
        }
        try {
            // a read of the initialize era too: its server may ask the agent something on the request's stream
            if (streams && (McpSchema.METHOD_TOOLS_CALL.equals(method) || !checked.modern()
                    && (McpSchema.METHOD_PROMPT_GET.equals(method) || McpSchema.METHOD_RESOURCES_READ.equals(method)))) {
                stream(request, response, callback, checked, callId, caller);
                return;
            }
            request.addIdleTimeoutListener(timeout -> false);
            // the request counts as being answered (a stop waits for it) until the callback says these bytes are out
            String answer = answerOrExplain(checked, callId, null, agent, received(request, caller));
            // a request refused for a client capability its client did not declare is a bad request (2026-07-28)
            sendJson(response, callback, MISSING_CLIENT_CAPABILITY.equals(JsonRpc.errorCode(answer)) ? 400 : 200,
                    answer);
        } finally {
            if (sessionCall != null) {
                sessionCalls.remove(sessionCall, callId);
            }
        }
    }

    /** A tool call of a 2025-era session. */
    private record SessionCall(String session, String caller, Object requestId) {
    }

    /** The tool call {@code checked} as one of its session's, which a notifications/cancelled may name; else null. */
    private static SessionCall sessionCall(Request request, JsonRpc.Request checked, HttpAccess.Caller caller) {
        String session = request.getHeaders().get(SessionStreams.SESSION_HEADER);
        return session == null || checked.modern() || !McpSchema.METHOD_TOOLS_CALL.equals(checked.method()) ? null
                : new SessionCall(session, caller.agent(), InFlightCalls.key(checked.idValue()));
    }

    /** Cancels the session's tool call that a client's notifications/cancelled names, if it is being answered. */
    private void cancelInSession(Request request, JsonRpc.Notification notification, HttpAccess.Caller caller) {
        String session = request.getHeaders().get(SessionStreams.SESSION_HEADER);
        JsonNode requestId = notification.params().get("requestId");
        if (session == null || requestId == null || !(requestId.isTextual() || requestId.isIntegralNumber())) {
            return;
        }
        String callId = sessionCalls.get(new SessionCall(session, caller.agent(),
                InFlightCalls.key(JsonRpc.idValue(requestId))));
        if (callId != null) {
            LOG.log(Level.INFO, "a client cancelled a tool call of its session; stopping it");
            protocol.cancel(callId);
        }
    }

    /**
     * What a session or a listen stream answers itself (true), else nothing (false): the 2025 era's initialize
     * opens a session, logging/setLevel and resources/subscribe and unsubscribe are kept by it; the 2026-07-28
     * era's subscriptions/listen opens a stream.
     */
    private boolean sessional(Request request, Response response, Callback callback, JsonRpc.Request checked,
            boolean streams, HttpAccess.Caller caller) {
        String method = checked.method();
        if (checked.modern()) {
            if (!JsonRpc.LISTEN.equals(method)) {
                return false;
            }
            if (!streams) {
                sendJson(response, callback, 406, JsonRpc.error(checked.id(), McpSchema.ErrorCodes.INVALID_REQUEST,
                        "Not Acceptable: " + method + " is answered as text/event-stream; accept it", null));
                return true;
            }
            SseNotificationStream[] opened = new SseNotificationStream[1];
            opened[0] = SseNotificationStream.open(request, response, callback,
                    () -> notifications.listens().ended(opened[0]));
            if (!notifications.listens().listen(checked.id(), (ObjectNode) checked.params().get("notifications"), opened[0])) {
                response.getHeaders().put(HttpHeader.RETRY_AFTER, "5");
                sendJson(response, callback, 503, JsonRpc.error(checked.id(), -32000, "Service Unavailable: "
                        + ListenStreams.MAX_LISTENS + " subscriptions/listen streams are open here; try again "
                        + "later or at another instance", null));
            }
            return true;
        }
        String id = request.getHeaders().get(SessionStreams.SESSION_HEADER);
        if (McpSchema.METHOD_INITIALIZE.equals(method)) {
            response.getHeaders().put(SessionStreams.SESSION_HEADER, notifications.open(caller.agent()));
            return false;
        }
        HttpNotifications.Found found = id == null ? null : notifications.session(id, caller.agent());
        if (found != null && found.session() == null) {
            refuse(response, callback, 404, -32001, "Not Found: " + found.refusal());
            return true;
        }
        HttpNotifications.Session session = found == null ? null : found.session();
        if (session != null) {
            request.setAttribute(SESSION, session);
        }
        if (McpSchema.METHOD_LOGGING_SET_LEVEL.equals(method) && session != null) {
            notifications.setLevel(session, JsonRpc.level(checked.params().get("level")));
            return false;
        }
        boolean subscribing = McpSchema.METHOD_RESOURCES_SUBSCRIBE.equals(method);
        if (!subscribing && !McpSchema.METHOD_RESOURCES_UNSUBSCRIBE.equals(method)) {
            return false;
        }
        String answer;
        if (session == null) {
            answer = JsonRpc.error(checked.id(), McpSchema.ErrorCodes.INVALID_REQUEST, "Invalid Request: " + method
                    + " needs a session to send the updates on: send initialize first, then the "
                    + SessionStreams.SESSION_HEADER + " header it answers with every request", null);
        } else {
            try {
                String uri = checked.params().get("uri").textValue();
                if (subscribing) {
                    notifications.subscribe(session, uri);
                } else {
                    notifications.unsubscribe(session, uri);
                }
                answer = JsonRpc.response(checked.id(), "{}");
            } catch (ServerRefusedException e) {
                answer = JsonRpc.error(checked.id(), e.code(), e.getMessage(), null);
            }
        }
        sendJson(response, callback, 200, answer);
        return true;
    }

    /**
     * A tool call (or a read of the initialize era) answered as an SSE stream: its notifications and the server's
     * requests to the agent, then its answer. A closed stream cancels it, but in a 2025-era session: there the call
     * goes on and its client resumes the stream (a GET with Last-Event-ID), as the revision asks (a disconnection is
     * not a cancellation; the client cancels with notifications/cancelled).
     */
    private void stream(Request request, Response response, Callback callback, JsonRpc.Request call, String callId,
            HttpAccess.Caller caller) {
        String agent = caller.agent();
        response.setStatus(200);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/event-stream");
        response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-cache, no-transform");
        // nginx would otherwise hold back the stream until it ends
        response.getHeaders().put("X-Accel-Buffering", "no");
        request.addIdleTimeoutListener(timeout -> false);
        HttpNotifications.Session session = call.modern() ? null
                : (HttpNotifications.Session) request.getAttribute(SESSION);
        SseWriter writer = new SseWriter(response, () -> {
            if (session != null) {
                LOG.log(Level.DEBUG, "the stream of a tool call of a session broke; the call goes on for its client"
                        + " to resume");
                return;
            }
            if (!stopping.getAsBoolean()) {
                LOG.log(Level.INFO, "a client closed the stream of a tool call; stopping it");
            }
            protocol.cancel(callId);
        });
        // 2025-11-25: events with ids and a priming event (SEP-1699), resumable within a session; 2026-07-28 has neither
        ResumableStream events = call.modern() ? null : session != null
                ? notifications.callStream(session, () -> protocol.cancel(callId))
                : new ResumableStream("c" + callId.substring(callId.indexOf('-') + 1));
        if (events != null) {
            events.attach(writer::write, 0L, true, true);
        }
        // a 2026-07-28 answer that comes soon goes before any heartbeat: a refusal can still be a plain 400
        ScheduledFuture<?> heartbeat = heartbeats.scheduleWithFixedDelay(
                () -> {
                    if (events != null) {
                        events.keepAlive();
                    } else {
                        writer.write(":\n\n", false);
                    }
                },
                (call.modern() ? FIRST_MODERN_HEARTBEAT : HEARTBEAT).toMillis(), HEARTBEAT.toMillis(),
                TimeUnit.MILLISECONDS);
        String answer;
        // in the initialize era a server behind execache may ask the client something on the call's stream; the
        // client POSTs its answer (2026-07-28 has no requests to the client outside input_required results)
        ToolCatalog.Agent asker = call.modern() ? null : (method, params) -> {
            return relayed.ask(method, RelayedRequests.params(method, params), asking -> {
                // in a session a client that lost the stream gets the request when it resumes it
                if (!events.send(Json.write(asking), false) && session == null) {
                    throw new AgentRefusedException(McpSchema.ErrorCodes.INTERNAL_ERROR, "the client closed the"
                            + " stream of the call before it was asked " + method);
                }
            });
        };
        try {
            answer = answerOrExplain(call, callId, (method, params) -> {
                ObjectNode notification = Json.MAPPER.createObjectNode();
                notification.put("jsonrpc", McpSchema.JSONRPC_VERSION);
                notification.put("method", method);
                notification.set("params", params);
                if (events != null) {
                    events.send(Json.write(notification), false);
                } else {
                    writer.write(SseWriter.event(Json.write(notification)), false);
                }
            }, agent, received(request, caller), asker);
        } finally {
            heartbeat.cancel(false);
        }
        if (MISSING_CLIENT_CAPABILITY.equals(JsonRpc.errorCode(answer)) && writer.endUnwritten()) {
            // nothing went out yet: a refusal for a capability the client did not declare is a bad request
            sendJson(response, callback, 400, answer);
            return;
        }
        if (events != null) {
            events.send(answer, true);
            if (session != null) {
                notifications.callEnded(session);
            }
        } else {
            writer.write(SseWriter.event(answer), true);
        }
        if (writer.endedWritten()) {
            callback.succeeded();
        } else {
            // the client went, or resumed the stream elsewhere: this answer ends here
            writer.write("", true);
            callback.failed(new IOException("the client closed the stream"));
        }
    }

    /**
     * The answer, or, when answering failed unexpectedly, a JSON-RPC error that says so (while
     * stopping: that the server is shutting down, as for any call still running then; a class
     * first loaded while the JVM exits can fail to initialize).
     */
    private String answerOrExplain(JsonRpc.Request request, String callId, BiConsumer<String, ObjectNode> stream,
            String agent, StatelessProtocol.Received received) {
        return answerOrExplain(request, callId, stream, agent, received, null);
    }

    private String answerOrExplain(JsonRpc.Request request, String callId, BiConsumer<String, ObjectNode> stream,
            String agent, StatelessProtocol.Received received, ToolCatalog.Agent asker) {
        try {
            return protocol.answer(request, callId, stream, agent, received, asker);
        } catch (RuntimeException | LinkageError e) {
            if (stopping.getAsBoolean() || jvmExiting()) {
                return protocol.shuttingDown(request);
            }
            LOG.log(Level.WARNING, "answering " + request.method() + " failed: " + e, e);
            return JsonRpc.error(request.id(), McpSchema.ErrorCodes.INTERNAL_ERROR,
                    request.method() + " failed unexpectedly: " + e, null);
        }
    }

    /** What the HTTP request says of the MCP request in it: its trace context and protocol version headers. */
    private static StatelessProtocol.Received received(Request request, HttpAccess.Caller caller) {
        // a task is its caller's: the agent's token (when tokens are required) and its 2025 session, if any
        String session = request.getHeaders().get(SessionStreams.SESSION_HEADER);
        String owner = caller == null ? null : (caller.agent() == null ? "" : caller.agent()) + "\n"
                + (session == null ? "" : session);
        return new StatelessProtocol.Received("tcp", TraceFields.ofHeaders(request.getHeaders()::get),
                request.getHeaders().get("MCP-Protocol-Version"), caller == null ? null : caller.person(), owner);
    }

    /**
     * Whether the JVM has begun to exit: its shutdown hooks run at once, so a call can fail
     * (a class first loaded then fails to initialize) before this server's own hook says it is draining.
     */
    private static boolean jvmExiting() {
        Thread probe = new Thread(() -> { });
        try {
            Runtime.getRuntime().addShutdownHook(probe);
            Runtime.getRuntime().removeShutdownHook(probe);
            return false;
        } catch (IllegalStateException e) {
            return true;
        }
    }
}
