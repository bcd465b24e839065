package dev.execache.mcp.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.core.spi.AgentRefusedException;
import dev.execache.core.spi.ToolCatalog;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.io.InputStream;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.Supplier;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.NetworkConnectionLimit;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.GracefulHandler;
import org.eclipse.jetty.server.handler.QoSHandler;
import org.eclipse.jetty.util.Blocker;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * MCP over Streamable HTTP at {@code /mcp}, stateless: every POST is answered on its own (JSON, or
 * for a tool call an SSE stream that carries its progress), in either era, by {@link
 * StatelessProtocol}, so that any instance behind a balancer can answer any request. A client
 * that closes a tool call's stream cancels the run. Host and Origin are checked against loopback
 * and configured names (DNS rebinding), tokens are asked when there are any, and bodies,
 * concurrency and silence are bounded.
 *
 * <p>Beside MCP it shows the cache's figures: {@code /metrics} (OpenMetrics text, for a scraper),
 * and a dashboard at {@code /} (a page, a stylesheet and a script from the jar) fed by
 * {@code /dashboard.json}. The figures open to any token of {@code /mcp} and to the tokens of the
 * figures alone; the page itself loads without one and asks for it.
 */
public final class McpHttpServer implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("dev.execache.mcp.server");
    static final String PATH = "/mcp";
    static final String METRICS_PATH = "/metrics";
    static final String DASHBOARD_DATA_PATH = "/dashboard.json";
    static final String OPENMETRICS_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8";
    /** The dashboard's files, by path: served as they are in the jar, so nothing is built at run time. */
    private static final Map<String, String> PAGES = Map.of(
            "/", "index.html",
            "/index.html", "index.html",
            "/dashboard.css", "dashboard.css",
            "/dashboard.js", "dashboard.js");
    private static final String PAGE_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; "
            + "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
    /** How often a running tool call's stream is written to, so that a client gone is noticed. */
    private static final Duration HEARTBEAT = Duration.ofMillis(250);

    private final StatelessProtocol protocol;
    private final HttpServeSettings settings;
    private final Server server;
    private final ServerConnector connector;
    private final HttpAccess access;
    private final Supplier<String> openMetrics;
    private final Dashboard dashboard;
    private final Map<String, byte[]> pages = new HashMap<>();
    /** Counts the requests being answered; once shut down, refuses new ones while those finish. */
    private final GracefulHandler drain;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicLong callIds = new AtomicLong();
    /** The servers' requests relayed to clients on tool calls' streams, until a client POSTs the answer. */
    private final RelayedRequests relayed = new RelayedRequests();
    private final ScheduledExecutorService heartbeats = Executors.newSingleThreadScheduledExecutor(task -> {
        Thread thread = new Thread(task, "execache-http-heartbeat");
        thread.setDaemon(true);
        return thread;
    });
    private final InFlightCalls calls;

    public McpHttpServer(ServeTools tools, String version, HttpServeSettings settings) {
        this(tools, version, settings, null);
    }

    /**
     * @param openMetrics the text {@code /metrics} answers, read when asked (as {@code execache stats --format
     *     openmetrics} prints it); null: no {@code /metrics}
     */
    public McpHttpServer(ServeTools tools, String version, HttpServeSettings settings, Supplier<String> openMetrics) {
        this.settings = settings;
        this.openMetrics = openMetrics;
        this.dashboard = new Dashboard(tools.executor(), tools.settings().store(), version,
                tools.gateway() == null ? List::of : tools.gateway()::servers, Clock.systemUTC());
        for (String file : new HashSet<>(PAGES.values())) {
            pages.put(file, page(file));
        }
        this.calls = tools.calls();
        this.protocol = new StatelessProtocol(tools, version, new JacksonMcpJsonMapper(new ObjectMapper()),
                (method, params) -> { });
        if (tools.gateway() != null) {
            tools.gateway().onChange(protocol::replaceTools);
        }
        this.access = new HttpAccess(settings, this::url);

        QueuedThreadPool threads = new QueuedThreadPool(Math.max(32, settings.maxConcurrent() * 2 + 16), 4);
        threads.setName("execache-http");
        threads.setDaemon(true);
        this.server = new Server(threads);
        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        http.setSendDateHeader(false);
        http.setRequestHeaderSize(16 * 1024);
        this.connector = new ServerConnector(server, new HttpConnectionFactory(http));
        connector.setHost(settings.address().getHostAddress());
        connector.setPort(settings.port());
        connector.setIdleTimeout(settings.idleTimeout().toMillis());
        server.addConnector(connector);
        // idle keep-alive connections must not use up the process's file descriptors: past the
        // limit the connector stops accepting until one closes
        server.addBean(new NetworkConnectionLimit(settings.maxConcurrent() * 4, connector));
        // a POST to /mcp that passed the checks is answered within the bound on requests at once:
        // past it, refused at once (no queue), so that a balancer tries another instance
        QoSHandler atOnce = new QoSHandler(new McpPost()) {
            @Override
            protected void reject(Request request, Response response, Callback callback, int status) {
                response.getHeaders().put(HttpHeader.RETRY_AFTER, "1");
                refuse(response, callback, status, -32000, "Service Unavailable: "
                        + settings.maxConcurrent() + " requests are being answered at once; try again");
            }
        };
        atOnce.setMaxRequestCount(settings.maxConcurrent());
        atOnce.setMaxSuspendedRequestCount(0);
        this.drain = new GracefulHandler(new McpHandler(atOnce)) {
            @Override
            protected void handleShutdownRejection(Request request, Response response, Callback callback) {
                if (isMcp(Request.getPathInContext(request))) {
                    refuse(response, callback, 503, -32000, "the server is shutting down; send it again "
                            + "to another instance or once it is back");
                } else {
                    text(response, callback, 503, "the server is shutting down\n");
                }
            }
        };
        server.setHandler(drain);
        // what a stop still waits for once close() has waited for the requests: the connections to close
        server.setStopTimeout(settings.drainLimit().toMillis());
    }

    /** Binds the address and starts answering. */
    public McpHttpServer start() throws IOException {
        try {
            server.start();
            dashboard.start();
            access.start();
        } catch (IOException e) {
            throw e;
        } catch (Exception e) {
            throw new IOException("cannot serve HTTP on " + settings.address().getHostAddress() + ":" + settings.port()
                    + ": " + e.getMessage(), e);
        }
        return this;
    }

    /** The port it listens on (the one picked when the settings said 0). */
    public int port() {
        return connector.getLocalPort();
    }

    /** The URL of the MCP endpoint. */
    public String url() {
        String host = settings.address().getHostAddress();
        return "http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port() + PATH;
    }

    /** Blocks until the server has stopped. */
    public void awaitEnd() throws InterruptedException {
        server.join();
    }

    /**
     * Stops: new requests are answered 503, calls still running are stopped and answered that the
     * server is shutting down (as on stdio), and the server waits for those answers to go out.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        // refusing first, before the calls are stopped, so that no new call starts after them; and by the
        // handler rather than by server.stop(), which would also stop accepting connections: a client that
        // connects meanwhile is told 503 at once instead of waiting for a reset
        CompletableFuture<Void> drained = drain.shutdown();
        calls.cancelAll();
        relayed.failAll("execache is stopping");
        try {
            drained.get(settings.drainLimit().toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            LOG.log(Level.WARNING, "stopping; gave up waiting for " + drain.getCurrentRequestCount()
                    + " requests still being answered");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            LOG.log(Level.DEBUG, "waiting for the requests being answered: " + e);
        }
        try {
            server.stop();
        } catch (Exception e) {
            LOG.log(Level.DEBUG, "stopping the HTTP server: " + e);
        }
        heartbeats.shutdownNow();
        dashboard.close();
        protocol.close();
    }

    private static byte[] page(String file) {
        try (InputStream in = McpHttpServer.class.getResourceAsStream("dashboard/" + file)) {
            if (in == null) {
                throw new IllegalStateException("the dashboard's " + file + " is missing from the jar");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the dashboard's " + file + " from the jar: " + e.getMessage(), e);
        }
    }

    private static boolean isMcp(String path) {
        return PATH.equals(path) || (PATH + "/").equals(path);
    }

    /** Whether the client takes an SSE stream (a tool call's answer then carries its progress). */
    private static boolean streams(Request request) {
        String accept = request.getHeaders().get(HttpHeader.ACCEPT);
        return accept != null && accept.toLowerCase(Locale.ROOT).contains("text/event-stream");
    }

    /** The request attribute that carries the caller of an MCP request from the checks to its answer. */
    private static final String CALLER = HttpAccess.Caller.class.getName();

    /**
     * Routes a request and checks it (Host, Origin, token, method, media types, length); a POST to
     * /mcp that passes goes on to the wrapped handler.
     */
    private final class McpHandler extends Handler.Wrapper {
        McpHandler(Handler answering) {
            super(answering);
        }

        @Override
        public boolean handle(Request request, Response response, Callback callback) throws Exception {
            String path = Request.getPathInContext(request);
            boolean mcp = isMcp(path);
            boolean figures = METRICS_PATH.equals(path) || DASHBOARD_DATA_PATH.equals(path);
            boolean metadata = access.isMetadataPath(path);
            if (!mcp && !figures && !metadata && !PAGES.containsKey(path)) {
                return refuse(response, callback, 404, McpSchema.ErrorCodes.INVALID_REQUEST,
                        "Not Found: MCP is at " + PATH + ", the dashboard at /, the figures at " + METRICS_PATH);
            }
            String host = request.getHeaders().get(HttpHeader.HOST);
            if (!access.hostAllowed(host)) {
                LOG.log(Level.WARNING, "refused a request for host " + printable(host) + " (403): not a loopback name "
                        + "and not allowed by --http-allow-host");
                return refuse(response, callback, 403, -32000, "Forbidden: the Host header names a host this server "
                        + "does not answer for (allow it with --http-allow-host)");
            }
            String origin = request.getHeaders().get(HttpHeader.ORIGIN);
            if (origin != null && !access.originAllowed(origin)) {
                LOG.log(Level.WARNING, "refused a request from origin " + printable(origin) + " (403)");
                return refuse(response, callback, 403, -32000, "Forbidden: the Origin header names an origin this "
                        + "server does not answer (allow its host with --http-allow-host)");
            }
            if (metadata) {
                return showMetadata(request, response, callback);
            }
            if (!mcp) {
                return show(request, response, callback, path, figures);
            }
            HttpAccess.Decision decision = access.callerOfMcp(request.getHeaders().get(HttpHeader.AUTHORIZATION));
            if (decision.refusal() != null) {
                return refuse(response, callback, decision.refusal());
            }
            if (!"POST".equals(request.getMethod())) {
                response.getHeaders().put(HttpHeader.ALLOW, "POST");
                return refuse(response, callback, 405, -32000, "Method Not Allowed: this server is stateless; "
                        + "send each message as a POST (there is no session stream to GET or DELETE)");
            }
            String contentType = request.getHeaders().get(HttpHeader.CONTENT_TYPE);
            if (contentType == null || !contentType.toLowerCase(Locale.ROOT).startsWith("application/json")) {
                return refuse(response, callback, 415, McpSchema.ErrorCodes.INVALID_REQUEST,
                        "Unsupported Media Type: the body must be application/json");
            }
            String accept = request.getHeaders().get(HttpHeader.ACCEPT);
            if (accept != null && !streams(request) && !accept.toLowerCase(Locale.ROOT).contains("application/json")
                    && !accept.contains("*/*")) {
                return refuse(response, callback, 406, McpSchema.ErrorCodes.INVALID_REQUEST,
                        "Not Acceptable: accept application/json and text/event-stream");
            }
            if (request.getLength() > settings.maxBodyBytes()) {
                return tooLarge(response, callback);
            }
            request.setAttribute(CALLER, decision.caller());
            return super.handle(request, response, callback);
        }

        /** The dashboard's files, its data and /metrics: read-only, GET (or HEAD). */
        private boolean show(Request request, Response response, Callback callback, String path, boolean figures) {
            if (!"GET".equals(request.getMethod()) && !"HEAD".equals(request.getMethod())) {
                response.getHeaders().put(HttpHeader.ALLOW, "GET, HEAD");
                return text(response, callback, 405, "Method Not Allowed: " + path + " is read with GET\n");
            }
            response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-store");
            response.getHeaders().put("X-Content-Type-Options", "nosniff");
            response.getHeaders().put("Referrer-Policy", "no-referrer");
            if (!figures) {
                String file = PAGES.get(path);
                response.getHeaders().put("Content-Security-Policy", PAGE_POLICY);
                String type = file.endsWith(".html") ? "text/html; charset=utf-8"
                        : file.endsWith(".css") ? "text/css; charset=utf-8" : "text/javascript; charset=utf-8";
                return send(response, callback, 200, type, file.equals("index.html") ? shell() : pages.get(file));
            }
            HttpAccess.Refusal refusal = access.callerOfFigures(request.getHeaders().get(HttpHeader.AUTHORIZATION))
                    .refusal();
            if (refusal != null) {
                if (refusal.challenge() != null) {
                    response.getHeaders().put(HttpHeader.WWW_AUTHENTICATE, refusal.challenge());
                }
                return text(response, callback, refusal.status(), refusal.message() + "\n");
            }
            if (METRICS_PATH.equals(path)) {
                if (openMetrics == null) {
                    return text(response, callback, 404, "Not Found: this server has no " + METRICS_PATH + "\n");
                }
                String metrics;
                try {
                    metrics = openMetrics.get();
                } catch (RuntimeException e) {
                    LOG.log(Level.WARNING, "the figures for " + METRICS_PATH + " could not be read: " + e.getMessage());
                    return text(response, callback, 503, "the figures could not be read: " + e.getMessage() + "\n");
                }
                return send(response, callback, 200, OPENMETRICS_TYPE, metrics.getBytes(StandardCharsets.UTF_8));
            }
            String json;
            try {
                json = Json.write(dashboard.json());
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "the dashboard's figures could not be read: " + e.getMessage());
                ObjectNode error = Json.MAPPER.createObjectNode();
                error.put("error", "the figures could not be read: " + e.getMessage());
                return send(response, callback, 503, "application/json", Json.write(error).getBytes(StandardCharsets.UTF_8));
            }
            return send(response, callback, 200, "application/json", json.getBytes(StandardCharsets.UTF_8));
        }

        /** RFC 9728's Protected Resource Metadata: public (a client reads it before it has a token), GET. */
        private boolean showMetadata(Request request, Response response, Callback callback) {
            if (!"GET".equals(request.getMethod()) && !"HEAD".equals(request.getMethod())) {
                response.getHeaders().put(HttpHeader.ALLOW, "GET, HEAD");
                return text(response, callback, 405, "Method Not Allowed: the metadata is read with GET\n");
            }
            response.getHeaders().put(HttpHeader.CACHE_CONTROL, "max-age=300");
            return send(response, callback, 200, "application/json",
                    Json.write(access.metadata()).getBytes(StandardCharsets.UTF_8));
        }

        /** The page, told whether this server asks for a token (so that it asks before it is refused). */
        private byte[] shell() {
            String html = new String(pages.get("index.html"), StandardCharsets.UTF_8);
            return html.replace("data-token-asked=\"\"", "data-token-asked=\"" + access.figuresAskForToken() + "\"")
                    .getBytes(StandardCharsets.UTF_8);
        }
    }

    /** A POST to /mcp that passed the checks: its body read and answered, as JSON or as an SSE stream. */
    private final class McpPost extends Handler.Abstract {
        @Override
        public boolean handle(Request request, Response response, Callback callback) {
            try {
                byte[] body = readBody(request);
                if (body == null) {
                    tooLarge(response, callback);
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
                byte[] body = in.readNBytes(settings.maxBodyBytes() + 1);
                return body.length > settings.maxBodyBytes() ? null : body;
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
                accepted(response, callback);
                return;
            }
            String method = checked.method();
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
            if (streams && McpSchema.METHOD_TOOLS_CALL.equals(method)) {
                stream(request, response, callback, checked, callId, agent);
                return;
            }
            request.addIdleTimeoutListener(timeout -> false);
            // the request counts as being answered (a stop waits for it) until the callback says these bytes are out
            sendJson(response, callback, 200, answerOrExplain(checked, callId, null, agent, received(request)));
        }

        /** A tool call answered as an SSE stream: its notifications, then its answer. A closed stream cancels it. */
        private void stream(Request request, Response response, Callback callback, JsonRpc.Request call, String callId,
                String agent) {
            response.setStatus(200);
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/event-stream");
            response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-cache, no-transform");
            // nginx would otherwise hold back the stream until it ends
            response.getHeaders().put("X-Accel-Buffering", "no");
            request.addIdleTimeoutListener(timeout -> false);
            SseWriter writer = new SseWriter(response, () -> {
                if (!drain.isShutdown()) {
                    LOG.log(Level.INFO, "a client closed the stream of a tool call; stopping it");
                }
                protocol.cancel(callId);
            });
            ScheduledFuture<?> heartbeat = heartbeats.scheduleWithFixedDelay(() -> writer.write(":\n\n", false),
                    HEARTBEAT.toMillis(), HEARTBEAT.toMillis(), TimeUnit.MILLISECONDS);
            String answer;
            // in the initialize era a server behind execache may ask the client something on the call's stream; the
            // client POSTs its answer (2026-07-28 has no requests to the client outside input_required results)
            ToolCatalog.Agent asker = call.modern() ? null : (method, params) -> {
                return relayed.ask(method, RelayedRequests.params(method, params), asking -> {
                    if (!writer.write(event(Json.write(asking)), false)) {
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
                    writer.write(event(Json.write(notification)), false);
                }, agent, received(request), asker);
            } finally {
                heartbeat.cancel(false);
            }
            if (writer.write(event(answer), true)) {
                callback.succeeded();
            } else {
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
                if (drain.isShutdown() || jvmExiting()) {
                    return protocol.shuttingDown(request);
                }
                LOG.log(Level.WARNING, "answering " + request.method() + " failed: " + e, e);
                return JsonRpc.error(request.id(), McpSchema.ErrorCodes.INTERNAL_ERROR,
                        request.method() + " failed unexpectedly: " + e, null);
            }
        }

        /** What the HTTP request says of the MCP request in it: its trace context and protocol version headers. */
        private static StatelessProtocol.Received received(Request request) {
            return new StatelessProtocol.Received("tcp", TraceFields.ofHeaders(request.getHeaders()::get),
                    request.getHeaders().get("MCP-Protocol-Version"));
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

    private boolean tooLarge(Response response, Callback callback) {
        return refuse(response, callback, 413, McpSchema.ErrorCodes.INVALID_REQUEST, "Content Too Large: a body "
                + "is at most " + settings.maxBodyBytes() + " bytes");
    }


    private static boolean text(Response response, Callback callback, int status, String text) {
        return send(response, callback, status, "text/plain; charset=utf-8", text.getBytes(StandardCharsets.UTF_8));
    }

    private static boolean send(Response response, Callback callback, int status, String type, byte[] body) {
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, type);
        response.write(true, ByteBuffer.wrap(body), callback);
        return true;
    }

    private static String event(String json) {
        return "event: message\ndata: " + JsonText.escapeLoneSurrogates(json.replace("\r\n", "\\n")
                .replace("\n", "\\n").replace("\r", "\\n")) + "\n\n";
    }

    private static void accepted(Response response, Callback callback) {
        response.setStatus(202);
        callback.succeeded();
    }

    private static boolean refuse(Response response, Callback callback, HttpAccess.Refusal refusal) {
        if (refusal.challenge() != null) {
            response.getHeaders().put(HttpHeader.WWW_AUTHENTICATE, refusal.challenge());
        }
        if (refusal.status() == 503) {
            response.getHeaders().put(HttpHeader.RETRY_AFTER, "5");
        }
        return refuse(response, callback, refusal.status(), -32000, refusal.message());
    }

    private static boolean refuse(Response response, Callback callback, int status, int code, String message) {
        return refuse(response, callback, status, code, message, null);
    }

    private static boolean refuse(Response response, Callback callback, int status, int code, String message,
            JsonNode data) {
        sendJson(response, callback, status, JsonRpc.error(null, code, message, data));
        return true;
    }

    private static void sendJson(Response response, Callback callback, int status, String json) {
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        Content.Sink.write(response, true, JsonText.escapeLoneSurrogates(json), callback);
    }

    private static String printable(String value) {
        if (value == null) {
            return "(none)";
        }
        String clean = value.replaceAll("[^\\x20-\\x7e]", "?");
        return clean.length() <= 80 ? clean : clean.substring(0, 77) + "...";
    }

    /** Writes an SSE stream one event at a time, from any thread; the first failed write says the client is gone. */
    private static final class SseWriter {
        private final Response response;
        private final Runnable onGone;
        private boolean gone;
        private boolean ended;

        SseWriter(Response response, Runnable onGone) {
            this.response = response;
            this.onGone = onGone;
        }

        synchronized boolean write(String text, boolean last) {
            if (gone || ended) {
                return false;
            }
            try (Blocker.Callback written = Blocker.callback()) {
                Content.Sink.write(response, last, text, written);
                written.block();
                ended = last;
                return true;
            } catch (IOException | RuntimeException e) {
                gone = true;
                onGone.run();
                return false;
            }
        }
    }

    /**
     * The 2026-07-28 era's header checks: MCP-Protocol-Version, Mcp-Method and Mcp-Name must say
     * what the body says (400, HeaderMismatch), and an envelope must be whole.
     */
    private record HeaderCheck(int code, String message, JsonNode data) {
        private static final String BASE64_PREFIX = "=?base64?";
        private static final String BASE64_SUFFIX = "?=";

        static HeaderCheck of(Request request, ObjectNode message, boolean isRequest) {
            if (message == null) {
                return null;
            }
            String method = message.get("method").textValue();
            JsonNode params = message.get("params");
            String version = header(request, "MCP-Protocol-Version");
            String methodHeader = header(request, "Mcp-Method");
            boolean headerModern = version != null && version.compareTo(JsonRpc.MODERN) >= 0
                    && !JsonRpc.LEGACY.contains(version);
            boolean claims = JsonRpc.claimsEnvelope(params);
            if (McpSchema.METHOD_INITIALIZE.equals(method) && !claims) {
                return headerModern ? mismatch(version, "an initialize request (the 2025 handshake) was sent with "
                        + "MCP-Protocol-Version " + version) : null;
            }
            if (claims) {
                if (JsonRpc.envelopeProblem(params) != null) {
                    // answered by JsonRpc's check of the envelope
                    return null;
                }
                String claimed = params.get("_meta").get(JsonRpc.PROTOCOL_VERSION_META).textValue();
                if (version != null && !version.equals(claimed)) {
                    return mismatch(version, "the body's _meta names protocol version " + claimed
                            + " but the MCP-Protocol-Version header names " + version);
                }
                if (methodHeader != null && !methodHeader.equals(method)) {
                    return mismatch(methodHeader, "the body names method " + method + " but the Mcp-Method header names "
                            + methodHeader);
                }
                if (!isRequest) {
                    return null;
                }
                if (!JsonRpc.MODERN.equals(claimed)) {
                    // answered by JsonRpc's check of the envelope
                    return null;
                }
                if (version == null) {
                    return mismatch("(missing)", "the body's _meta names protocol version " + claimed
                            + " but the MCP-Protocol-Version header is missing");
                }
                if (methodHeader == null) {
                    return mismatch("(missing)", "the body names method " + method + " but the Mcp-Method header is missing");
                }
                if (McpSchema.METHOD_TOOLS_CALL.equals(method) && params.path("name").isTextual()) {
                    String name = params.get("name").textValue();
                    String nameHeader = header(request, "Mcp-Name");
                    if (nameHeader == null) {
                        return mismatch("(missing)", "the body calls tool " + name + " but the Mcp-Name header is missing");
                    }
                    String decoded = decode(nameHeader);
                    if (!name.equals(decoded)) {
                        return mismatch(nameHeader, "the body calls tool " + name + " but the Mcp-Name header names "
                                + (decoded == null ? "an invalid Base64 value" : decoded));
                    }
                }
                return null;
            }
            if (headerModern) {
                if (!isRequest) {
                    return methodHeader != null && !methodHeader.equals(method) ? mismatch(methodHeader,
                            "the body names method " + method + " but the Mcp-Method header names " + methodHeader) : null;
                }
                return new HeaderCheck(McpSchema.ErrorCodes.INVALID_PARAMS, "Invalid params: the MCP-Protocol-Version "
                        + "header names " + version + ", but the request has no _meta envelope ("
                        + JsonRpc.PROTOCOL_VERSION_META + ", " + JsonRpc.CLIENT_CAPABILITIES_META + ")",
                        null);
            }
            if (version != null && !JsonRpc.LEGACY.contains(version) && !JsonRpc.MODERN.equals(version)) {
                return new HeaderCheck(McpSchema.ErrorCodes.INVALID_REQUEST, "Bad Request: unsupported "
                        + "MCP-Protocol-Version " + version + " (supported: " + JsonRpc.MODERN + ", "
                        + String.join(", ", JsonRpc.LEGACY) + ")", null);
            }
            return null;
        }

        private static HeaderCheck mismatch(String header, String body) {
            ObjectNode data = Json.MAPPER.createObjectNode();
            ObjectNode mismatch = data.putObject("mismatch");
            mismatch.put("header", header);
            mismatch.put("body", body);
            return new HeaderCheck(JsonRpc.HEADER_MISMATCH,
                    "Bad Request: the request headers and body disagree: " + body, data);
        }

        private static String header(Request request, String name) {
            String value = request.getHeaders().get(name);
            return value == null ? null : value.strip();
        }

        /** An Mcp-Name value: as it is, or Base64 between =?base64? and ?= (names that are not plain ASCII). */
        private static String decode(String value) {
            if (!(value.startsWith(BASE64_PREFIX) && value.endsWith(BASE64_SUFFIX))) {
                return value;
            }
            try {
                return new String(Base64.getDecoder().decode(value.substring(BASE64_PREFIX.length(),
                        value.length() - BASE64_SUFFIX.length())), StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) {
                return null;
            }
        }
    }
}
