package dev.execache.tools.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.core.spi.AgentRefusedException;
import dev.execache.core.spi.ToolCatalog;
import dev.execache.tools.mcp.HttpMcpException.Kind;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.lang.System.Logger.Level;
import java.net.ConnectException;
import java.net.URI;
import java.net.UnknownHostException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;
import javax.net.ssl.SSLHandshakeException;

/**
 * The client side of MCP's Streamable HTTP transport, in both eras: 2026-07-28 (stateless, each
 * request carrying its protocol version and capabilities in {@code _meta}) when the server answers
 * {@code server/discover} with it, else the {@code initialize} handshake and a session
 * (2025-11-25 and older). Answers come as JSON or as an SSE stream; a stream that ends before the
 * answer is resumed with {@code Last-Event-ID} after the server's {@code retry}. The server's requests to the client
 * (sampling, elicitation, roots) on a request's stream go to that request's agent, those on the session's stream to
 * the agent {@code outsideRequests} names; the answer is POSTed back. A request whose thread is interrupted ends: its
 * stream is closed, and a session's server is sent {@code notifications/cancelled}.
 *
 * <p>Not the SDK's {@code HttpClientStreamableHttpTransport} (2.1.0): it knows neither
 * {@code server/discover} nor the 2026-07-28 {@code _meta} envelope, and reports 401, 429 and 503
 * as one exception without the status's meaning or {@code Retry-After}, which a person needs.
 */
final class StreamableHttpClient implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("dev.execache.tools.mcp");
    static final String MODERN = "2026-07-28";
    static final String LEGACY = "2025-11-25";
    private static final String META = "io.modelcontextprotocol/";
    static final String CLIENT_CAPABILITIES_META = META + "clientCapabilities";
    /** The 2026-07-28 era's error for a request in a version the server does not speak; its data lists those it does. */
    private static final int UNSUPPORTED_PROTOCOL_VERSION = -32022;
    private static final Duration DEFAULT_RETRY = Duration.ofSeconds(1);
    private static final Duration LISTEN_RETRY_MAX = Duration.ofSeconds(30);
    /** How long telling the server of a cancel, or answering its request, may take. */
    private static final Duration SHORT = Duration.ofSeconds(5);
    /**
     * An answer's stream is read here and its messages handed to the requesting thread, which waits interruptibly:
     * the JDK client's body stream does not end a blocked read when its reader is interrupted.
     */
    private static final ExecutorService READERS = Executors.newCachedThreadPool(runnable -> {
        Thread thread = new Thread(runnable, "execache-mcp-read");
        thread.setDaemon(true);
        return thread;
    });
    /** What the session's stream carries that the server asks outside a request waits here, off the listening thread. */
    private static final ExecutorService ASKING = Executors.newCachedThreadPool(runnable -> {
        Thread thread = new Thread(runnable, "execache-mcp-http-asked");
        thread.setDaemon(true);
        return thread;
    });
    /** Ends the messages of one stream in the queue its reader fills. */
    private static final JsonNode END = com.fasterxml.jackson.databind.node.MissingNode.getInstance();

    private final String server;
    private final URI url;
    private final Supplier<Map<String, String>> headers;
    private final Set<String> headerNames;
    private final HttpClient http;
    private final Consumer<JsonNode> notifications;
    private final Predicate<String> unauthorized;
    private final Supplier<ToolCatalog.Agent> outsideRequests;
    private final ObjectMapper json = McpJson.JSON;
    private final AtomicLong ids = new AtomicLong();

    private volatile String protocolVersion;
    private volatile boolean modern;
    private volatile String sessionId;
    private volatile JsonNode serverInfo;
    private volatile JsonNode capabilities;
    /** What the server said of itself (server/discover or initialize); null for nothing. */
    private volatile String instructions;
    private volatile boolean closed;
    private volatile Map<String, McpHeaders.Declarations> toolHeaders = Map.of();
    /** The 2026-07-28 era's log level, sent in every request's _meta; null: none asked. */
    private volatile String logLevel;
    private volatile Thread listener;
    private volatile InputStream listening;
    /** The resources subscribed to in the 2026-07-28 era, sent in every subscriptions/listen request. */
    private final Set<String> resourceSubscriptions = ConcurrentHashMap.newKeySet();
    /** Counted down when the notification stream is open (or cannot be), so that open() returns listening. */
    private final CountDownLatch streamOpen = new CountDownLatch(1);

    /**
     * @param headers the headers of every request, asked for each request (a token may be renewed)
     * @param headerNames the configured headers' names, for messages (never their values)
     * @param notifications gets every notification the server sends
     * @param unauthorized told the WWW-Authenticate header of a 401; says whether to send the request
     *     once more (with a new token)
     * @param outsideRequests the agent a server's request on the session's stream goes to (null: none can answer)
     */
    StreamableHttpClient(String server, URI url, Supplier<Map<String, String>> headers, Set<String> headerNames,
            HttpClient http, Consumer<JsonNode> notifications, Predicate<String> unauthorized,
            Supplier<ToolCatalog.Agent> outsideRequests) {
        this.outsideRequests = outsideRequests;
        this.server = server;
        this.url = url;
        this.headers = headers;
        this.headerNames = new TreeSet<>(headerNames);
        this.http = http;
        this.notifications = notifications;
        this.unauthorized = unauthorized;
    }

    /** Discovers the server (2026-07-28) or initializes a session with it (2025-11-25 and older). */
    void open(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        sessionId = null;
        modern = true;
        protocolVersion = MODERN;
        try {
            JsonNode discovered = exchange("server/discover", json.createObjectNode(), deadline);
            boolean offered = false;
            for (JsonNode version : discovered.path("supportedVersions")) {
                offered |= MODERN.equals(version.asText());
            }
            if (offered) {
                serverInfo = discovered.has("serverInfo") ? discovered.get("serverInfo")
                        : discovered.path("_meta").path(META + "serverInfo");
                capabilities = discovered.path("capabilities");
                instructions = discovered.path("instructions").textValue();
                if (capabilities.path("tools").path("listChanged").asBoolean(false)) {
                    listen(deadline);
                }
                return;
            }
        } catch (HttpMcpException e) {
            if (e.kind() != Kind.PROTOCOL && e.kind() != Kind.RPC_ERROR && e.kind() != Kind.SESSION_EXPIRED) {
                throw e;
            }
            // a server of an earlier era: no such method, or no request outside a session
        }
        initialize(deadline);
    }

    /**
     * Initializes a session (2025-11-25) whatever else the server speaks: for the agents of that era beside a
     * 2026-07-28 connection (see UrlServer).
     */
    void openSession(Duration timeout) {
        sessionId = null;
        initialize(System.nanoTime() + timeout.toNanos());
    }

    private void initialize(long deadline) {
        modern = false;
        protocolVersion = LEGACY;
        ObjectNode params = json.createObjectNode();
        params.put("protocolVersion", LEGACY);
        params.set("capabilities", json.valueToTree(ServerProcessTransport.CLIENT_CAPABILITIES));
        params.putObject("clientInfo").put("name", "execache").put("version", "gateway");
        JsonNode initialized = exchange("initialize", params, deadline);
        protocolVersion = initialized.path("protocolVersion").asText(LEGACY);
        serverInfo = initialized.path("serverInfo");
        capabilities = initialized.path("capabilities");
        instructions = initialized.path("instructions").textValue();
        notify("notifications/initialized", deadline);
        // the session's own stream carries what the server sends outside a request: list changes, log messages, and
        // requests to the client that a server's SDK sends there when not told which call they belong to
        if (sessionId != null) {
            listen(deadline);
        }
    }

    /**
     * Subscribes to a resource's updates, or ends that (2026-07-28, where {@code subscriptions/listen} replaced
     * {@code resources/subscribe}): the stream is opened again naming the resources now subscribed to.
     */
    void subscribe(String uri, boolean subscribed) {
        boolean changed = subscribed ? resourceSubscriptions.add(uri) : resourceSubscriptions.remove(uri);
        if (!changed || closed) {
            return;
        }
        Thread current = listener;
        if (current == null || !current.isAlive()) {
            listen(System.nanoTime());
        } else {
            // its loop opens it again, with the new list
            closeQuietly(listening);
        }
    }

    /** The x-mcp-header declarations of the server's tools, by tool name, mirrored as headers of their calls. */
    void toolHeaders(Map<String, McpHeaders.Declarations> declared) {
        toolHeaders = Map.copyOf(declared);
    }

    /** The level a 2026-07-28 server is to log from, sent with every request from now on. */
    void logLevel(String level) {
        logLevel = level;
    }

    /** What the server said of itself when it was opened, null for nothing. */
    String instructions() {
        return instructions;
    }

    /** What the server declared it offers when it was opened. */
    JsonNode capabilities() {
        return capabilities;
    }

    /** The protocol version in use. */
    String protocolVersion() {
        return protocolVersion;
    }

    boolean modern() {
        return modern;
    }

    /** The server's name and version, as it gave them. */
    JsonNode serverInfo() {
        return serverInfo;
    }

    /** Sends a request and returns its result; what the server asks during it, nobody can answer. */
    JsonNode request(String method, ObjectNode params, Duration timeout) {
        return request(method, params, timeout, null);
    }

    /**
     * Sends a request and returns its result; what the server asks the client on the request's stream goes to
     * {@code agent} (null: it is refused, saying nobody can answer).
     *
     * @throws HttpMcpException of {@link Kind#CANCELLED} when the thread was interrupted: the request was ended
     */
    JsonNode request(String method, ObjectNode params, Duration timeout, ToolCatalog.Agent agent) {
        return exchange(method, params, System.nanoTime() + timeout.toNanos(), agent);
    }

    private JsonNode exchange(String method, ObjectNode params, long deadline) {
        return exchange(method, params, deadline, null);
    }

    private JsonNode exchange(String method, ObjectNode params, long deadline, ToolCatalog.Agent agent) {
        try {
            return exchangeOnce(method, params, deadline, agent);
        } catch (HttpMcpException e) {
            if (e.status() == 401 && unauthorized.test(e.challenge())) {
                return exchangeOnce(method, params, deadline, agent);
            }
            if (offersOurVersion(e)) {
                // the server refused the version and named those it speaks, ours among them: asked again, once, in it
                return exchangeOnce(method, params, deadline, agent);
            }
            throw e;
        }
    }

    /** An unsupported protocol version error (-32022) whose supported versions include the one in use. */
    private boolean offersOurVersion(HttpMcpException e) {
        if (e.error() == null || e.error().code() != UNSUPPORTED_PROTOCOL_VERSION || e.error().data() == null) {
            return false;
        }
        for (JsonNode version : e.error().data().path("supported")) {
            if (version.asText().equals(protocolVersion)) {
                return true;
            }
        }
        return false;
    }

    private JsonNode exchangeOnce(String method, ObjectNode params, long deadline, ToolCatalog.Agent agent) {
        long id = ids.incrementAndGet();
        ObjectNode message = json.createObjectNode();
        message.put("jsonrpc", "2.0");
        message.put("id", id);
        message.put("method", method);
        message.set("params", withMeta(params));
        String sentSession = sessionId;
        try {
            HttpResponse<InputStream> response = post(message, deadline);
            if (method.equals("initialize")) {
                sessionId = response.headers().firstValue("mcp-session-id").orElse(null);
            }
            return answer(response, id, sentSession, deadline, agent);
        } catch (HttpMcpException e) {
            if (e.kind() == Kind.CANCELLED || e.kind() == Kind.TIMEOUT) {
                // the request's stream is closed; a session's server is also told, as the spec asks of a client
                tellCancelled(id, e.kind() == Kind.CANCELLED ? "the call was cancelled" : "no answer in time");
            }
            throw e;
        }
    }

    /** notifications/cancelled for request {@code id}, to a server of a session (best effort, on a cleared interrupt). */
    private void tellCancelled(long id, String reason) {
        if (modern || sessionId == null) {
            return;
        }
        boolean interrupted = Thread.interrupted();
        try {
            ObjectNode message = json.createObjectNode();
            message.put("jsonrpc", "2.0");
            message.put("method", "notifications/cancelled");
            message.putObject("params").put("requestId", id).put("reason", reason);
            HttpResponse<InputStream> response = post(message, System.nanoTime() + SHORT.toNanos());
            closeQuietly(response.body());
        } catch (HttpMcpException e) {
            LOG.log(Level.DEBUG, "server " + server + ": telling it of a cancel failed: " + e.getMessage());
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Tells a session's server the client's roots changed (the 2026-07-28 era has no such notification). */
    void rootsChanged() {
        if (modern || sessionId == null) {
            return;
        }
        try {
            notify("notifications/roots/list_changed", System.nanoTime() + SHORT.toNanos());
        } catch (HttpMcpException e) {
            LOG.log(Level.DEBUG, "server " + server + ": telling it the roots changed failed: " + e.getMessage());
        }
    }

    private void notify(String method, long deadline) {
        ObjectNode message = json.createObjectNode();
        message.put("jsonrpc", "2.0");
        message.put("method", method);
        HttpResponse<InputStream> response = post(message, deadline);
        check(response, sessionId);
        closeQuietly(response.body());
    }

    private ObjectNode withMeta(ObjectNode params) {
        ObjectNode copy = params.deepCopy();
        if (modern) {
            ObjectNode meta = copy.has("_meta") && copy.get("_meta").isObject() ? (ObjectNode) copy.get("_meta") : copy.putObject("_meta");
            meta.put(META + "protocolVersion", MODERN);
            if (!meta.has(CLIENT_CAPABILITIES_META)) {
                // an agent's own capabilities, when the request carries them (UrlServer), else execache's
                meta.set(CLIENT_CAPABILITIES_META, json.valueToTree(ServerProcessTransport.CLIENT_CAPABILITIES));
            }
            meta.putObject(META + "clientInfo").put("name", "execache").put("version", "gateway");
            String level = logLevel;
            if (level != null) {
                meta.put(META + "logLevel", level);
            }
        }
        return copy;
    }

    private HttpResponse<InputStream> post(ObjectNode message, long deadline) {
        byte[] body;
        try {
            body = json.writeValueAsBytes(message);
        } catch (IOException e) {
            throw new IllegalStateException("a JSON-RPC message of ours cannot be written", e);
        }
        HttpRequest.Builder request = base(deadline)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        McpHeaders.standard(message).forEach(request::header);
        if ("tools/call".equals(message.path("method").textValue())) {
            JsonNode params = message.path("params");
            McpHeaders.Declarations declared = toolHeaders.get(params.path("name").asText());
            if (declared != null) {
                declared.of(params.path("arguments")).forEach(request::header);
            }
        }
        // a request's trace context (W3C Trace Context in its _meta) also goes as headers, for HTTP tracing on the way
        JsonNode meta = message.path("params").path("_meta");
        for (String field : List.of("traceparent", "tracestate")) {
            if (meta.get(field) != null && meta.get(field).isTextual()) {
                request.header(field, meta.get(field).textValue());
            }
        }
        return send(request);
    }

    private HttpRequest.Builder base(long deadline) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
            throw new HttpMcpException(Kind.TIMEOUT, "server " + server + " did not answer in time");
        }
        HttpRequest.Builder request = HttpRequest.newBuilder(url).timeout(Duration.ofNanos(left));
        headers.get().forEach(request::header);
        if (protocolVersion != null) {
            request.header("MCP-Protocol-Version", protocolVersion);
        }
        String session = sessionId;
        if (session != null) {
            request.header("Mcp-Session-Id", session);
        }
        return request;
    }

    private HttpResponse<InputStream> send(HttpRequest.Builder request) {
        try {
            return http.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
        } catch (HttpTimeoutException e) {
            throw new HttpMcpException(Kind.TIMEOUT, "server " + server + " did not answer in time");
        } catch (SSLHandshakeException e) {
            throw new HttpMcpException(Kind.UNREACHABLE, "server " + server + " at " + UrlServerSettings.withoutQuery(url)
                    + ": its TLS certificate is not trusted by the JVM's trust store (" + describe(e) + "); for a private CA,"
                    + " name a trust store that holds it: -Djavax.net.ssl.trustStore");
        } catch (ConnectException e) {
            throw new HttpMcpException(Kind.UNREACHABLE, "server " + server + " cannot be reached at "
                    + UrlServerSettings.withoutQuery(url) + " (" + connectProblem(e) + ")");
        } catch (IOException e) {
            throw new HttpMcpException(Kind.UNREACHABLE, "server " + server + " cannot be reached at "
                    + UrlServerSettings.withoutQuery(url) + ": " + describe(e));
        } catch (InterruptedException e) {
            // the JDK's client ended the exchange (closing its connection), so the server sees the request end
            Thread.currentThread().interrupt();
            throw new HttpMcpException(Kind.CANCELLED, "the request to server " + server + " was cancelled");
        }
    }

    /** Turns a status that is not a success into the exception a person can act on. */
    private void check(HttpResponse<InputStream> response, String sentSession) {
        int status = response.statusCode();
        if (status / 100 == 2) {
            return;
        }
        byte[] body = head(response.body());
        String excerpt = new String(body, 0, Math.min(body.length, 300), StandardCharsets.UTF_8).strip().replaceAll("\\s+", " ");
        if (status == 401 || status == 403) {
            throw new HttpMcpException(Kind.CREDENTIALS_REFUSED, status, null,
                    response.headers().firstValue("www-authenticate").orElse(null), "server " + server
                    + " refused the credentials (HTTP " + status + ")" + (headerNames.isEmpty()
                            ? ": it needs some; give its entry headers (such as Authorization) or oauth"
                            : ": check the value of the header " + String.join(", ", headerNames)));
        }
        if (status == 429 || status == 503) {
            Duration retryAfter = retryAfter(response.headers().firstValue("retry-after").orElse(null));
            throw new HttpMcpException(Kind.RETRY_LATER, status, retryAfter, "server " + server
                    + (status == 429 ? " is rate limiting (HTTP 429)" : " is unavailable (HTTP 503)")
                    + (retryAfter == null ? "" : "; it asks to try again in " + retryAfter.toSeconds() + " s"));
        }
        if (status == 502 || status == 504) {
            throw new HttpMcpException(Kind.UNREACHABLE, status, null, "server " + server + " cannot be reached: the proxy"
                    + " in front of it answered HTTP " + status + (status == 502 ? " (bad gateway)" : " (gateway timeout)"));
        }
        if (status == 404 && sentSession != null) {
            throw new HttpMcpException(Kind.SESSION_EXPIRED, status, null, "server " + server + " ended the session");
        }
        JsonNode error = jsonRpcError(response, body);
        if (error != null) {
            throw HttpMcpException.rpcError(server, error.path("code").asInt(), error.path("message").asText("(no message)"),
                    error.get("data"));
        }
        throw new HttpMcpException(Kind.PROTOCOL, status, null, "server " + server + " answered HTTP " + status
                + (excerpt.isEmpty() ? "" : ": " + excerpt));
    }

    /** The JSON-RPC error a status that is not a success came with (a 2026-07-28 server's 400 or 404), else null. */
    private JsonNode jsonRpcError(HttpResponse<InputStream> response, byte[] body) {
        if (!response.headers().firstValue("content-type").orElse("").toLowerCase(Locale.ROOT).startsWith("application/json")) {
            return null;
        }
        try {
            JsonNode error = json.readTree(body).path("error");
            return error.path("code").isIntegralNumber() ? error : null;
        } catch (IOException e) {
            return null;
        }
    }

    private JsonNode answer(HttpResponse<InputStream> response, long id, String sentSession, long deadline,
            ToolCatalog.Agent agent) {
        check(response, sentSession);
        String type = response.headers().firstValue("content-type").orElse("").toLowerCase(Locale.ROOT);
        if (type.startsWith("text/event-stream")) {
            return fromStream(response.body(), id, deadline, agent);
        }
        if (response.statusCode() == 202 || !type.startsWith("application/json")) {
            closeQuietly(response.body());
            throw new HttpMcpException(Kind.PROTOCOL, response.statusCode(), null, "server " + server
                    + " answered a request with HTTP " + response.statusCode() + " and " + (type.isEmpty() ? "no body" : type)
                    + ", not JSON or an event stream");
        }
        try (InputStream body = response.body()) {
            JsonNode node = json.readTree(body);
            for (JsonNode message : node.isArray() ? node : List.of(node)) {
                if (isAnswer(message, id)) {
                    return result(message);
                }
                handle(message, agent, deadline);
            }
        } catch (IOException e) {
            throw new HttpMcpException(Kind.PROTOCOL, "server " + server + " answered with a body that is not JSON: " + describe(e));
        }
        throw new HttpMcpException(Kind.PROTOCOL, "server " + server + " answered without the answer to request " + id);
    }

    /**
     * Reads an event stream until the answer to {@code id}, resuming it when it ends first; the server's requests on it
     * go to {@code agent}, its notifications are handed on, each on this thread in the order sent.
     */
    private JsonNode fromStream(InputStream first, long id, long deadline, ToolCatalog.Agent agent) {
        InputStream in = first;
        String lastEventId = null;
        Duration retry = DEFAULT_RETRY;
        while (true) {
            Events events = new Events();
            BlockingQueue<JsonNode> messages = new LinkedBlockingQueue<>();
            InputStream reading = in;
            READERS.execute(() -> {
                try {
                    events.read(reading, messages::add);
                } finally {
                    messages.add(END);
                }
            });
            try {
                while (true) {
                    JsonNode message = messages.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                    if (message == null) {
                        throw new HttpMcpException(Kind.TIMEOUT, "server " + server + " did not answer in time");
                    }
                    if (message == END) {
                        break;
                    }
                    if (isAnswer(message, id)) {
                        return result(message);
                    }
                    handle(message, agent, deadline);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new HttpMcpException(Kind.CANCELLED, "the request to server " + server + " was cancelled");
            } finally {
                closeQuietly(in);
                lastEventId = events.lastEventId != null ? events.lastEventId : lastEventId;
                retry = events.retry != null ? events.retry : retry;
            }
            if (System.nanoTime() >= deadline) {
                throw new HttpMcpException(Kind.TIMEOUT, "server " + server + " did not answer in time");
            }
            if (lastEventId == null) {
                throw new HttpMcpException(Kind.UNREACHABLE, "server " + server
                        + " closed the answer's stream before answering, and it cannot be resumed (no event id)");
            }
            pause(retry, deadline);
            HttpRequest.Builder resume = base(deadline).header("Accept", "text/event-stream")
                    .header("Last-Event-ID", lastEventId).GET();
            HttpResponse<InputStream> resumed = send(resume);
            check(resumed, sessionId);
            in = resumed.body();
        }
    }

    /**
     * The stream on which the server sends what is not an answer, such as
     * {@code notifications/tools/list_changed}: in the 2025 era the session's standalone stream
     * (a GET, resumed with {@code Last-Event-ID}), in the 2026-07-28 era a
     * {@code subscriptions/listen} request whose answer is that stream. Opened again after the
     * server's {@code retry} when it ends; a 2026 stream cannot be resumed, so a new one is taken
     * as a change (what it missed is listed again).
     */
    private void listen(long openedBy) {
        String session = sessionId;
        Thread thread = new Thread(() -> {
            String lastEventId = null;
            Duration retry = DEFAULT_RETRY;
            int failures = 0;
            boolean listenedBefore = false;
            while (!closed && Objects.equals(session, sessionId)) {
                Events events = new Events();
                try {
                    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                    HttpRequest.Builder request;
                    if (modern) {
                        ObjectNode message = json.createObjectNode();
                        message.put("jsonrpc", "2.0");
                        message.put("id", ids.incrementAndGet());
                        message.put("method", "subscriptions/listen");
                        ObjectNode params = json.createObjectNode();
                        ObjectNode wanted = params.putObject("notifications").put("toolsListChanged", true);
                        JsonNode offered = capabilities == null ? json.missingNode() : capabilities;
                        if (offered.path("prompts").path("listChanged").asBoolean(false)) {
                            wanted.put("promptsListChanged", true);
                        }
                        if (offered.path("resources").path("listChanged").asBoolean(false)) {
                            wanted.put("resourcesListChanged", true);
                        }
                        if (!resourceSubscriptions.isEmpty()) {
                            resourceSubscriptions.forEach(wanted.putArray("resourceSubscriptions")::add);
                        }
                        message.set("params", withMeta(params));
                        request = base(deadline).header("Content-Type", "application/json")
                                .header("Accept", "application/json, text/event-stream")
                                .POST(HttpRequest.BodyPublishers.ofByteArray(json.writeValueAsBytes(message)));
                        McpHeaders.standard(message).forEach(request::header);
                    } else {
                        request = base(deadline).header("Accept", "text/event-stream").GET();
                        if (lastEventId != null) {
                            request.header("Last-Event-ID", lastEventId);
                        }
                    }
                    HttpResponse<InputStream> response = send(request);
                    if (response.statusCode() == 405 || response.statusCode() == 409) {
                        closeQuietly(response.body());
                        return;
                    }
                    check(response, session);
                    String type = response.headers().firstValue("content-type").orElse("");
                    // a 2026-07-28 stream may also come as JSON lines, one message a line
                    boolean jsonLines = modern && type.startsWith("application/json");
                    if (!type.startsWith("text/event-stream") && !jsonLines) {
                        closeQuietly(response.body());
                        return;
                    }
                    listening = response.body();
                    streamOpen.countDown();
                    failures = 0;
                    if (modern && listenedBefore) {
                        notifications.accept(json.createObjectNode().put("method", "notifications/tools/list_changed"));
                    }
                    listenedBefore = true;
                    if (jsonLines) {
                        readLines(response.body(), this::listened);
                    } else {
                        events.read(response.body(), this::listened);
                    }
                } catch (HttpMcpException e) {
                    if (e.kind() == Kind.SESSION_EXPIRED) {
                        return;
                    }
                    failures++;
                    LOG.log(Level.DEBUG, "server " + server + ": its notification stream failed: " + e.getMessage());
                } catch (IOException e) {
                    throw new IllegalStateException("a JSON-RPC message of ours cannot be written", e);
                } finally {
                    streamOpen.countDown();
                    closeQuietly(listening);
                    lastEventId = events.lastEventId != null ? events.lastEventId : lastEventId;
                    retry = events.retry != null ? events.retry : retry;
                }
                Duration wait = failures == 0 ? retry : DEFAULT_RETRY.multipliedBy(1L << Math.min(failures, 5));
                try {
                    Thread.sleep(Math.min(wait.toMillis(), LISTEN_RETRY_MAX.toMillis()));
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "execache-mcp-" + server + "-listen");
        thread.setDaemon(true);
        listener = thread;
        thread.start();
        try {
            streamOpen.await(Math.max(0, openedBy - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Hands every message of a stream of JSON lines to {@code each}, in order, until the stream ends. */
    private void readLines(InputStream in, Consumer<JsonNode> each) {
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = lines.readLine()) != null) {
                if (!line.isBlank()) {
                    JsonNode message;
                    try {
                        message = json.readTree(line);
                    } catch (IOException e) {
                        LOG.log(Level.DEBUG, "server " + server + ": a line of its stream is not JSON");
                        continue;
                    }
                    each.accept(message);
                }
            }
        } catch (IOException e) {
            // the stream ended
        }
    }

    /** The events of one SSE stream, and the last event id and retry it gave. */
    private final class Events {
        String lastEventId;
        Duration retry;

        /** Hands every message of the stream to {@code each}, in order, until the stream ends. */
        void read(InputStream in, Consumer<JsonNode> each) {
            StringBuilder data = new StringBuilder();
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = lines.readLine()) != null) {
                    if (line.isEmpty()) {
                        dispatch(data.toString(), each);
                        data.setLength(0);
                    } else if (line.startsWith("data:")) {
                        data.append(data.length() == 0 ? "" : "\n").append(field(line, 5));
                    } else if (line.startsWith("id:")) {
                        lastEventId = field(line, 3);
                    } else if (line.startsWith("retry:")) {
                        try {
                            retry = Duration.ofMillis(Long.parseLong(field(line, 6).trim()));
                        } catch (NumberFormatException e) {
                            // the spec says to ignore a retry that is not a number
                        }
                    }
                }
                dispatch(data.toString(), each);
            } catch (IOException e) {
                // the stream ended (or was closed): the caller resumes it or gives up
            }
        }

        private void dispatch(String data, Consumer<JsonNode> each) {
            if (data.isBlank()) {
                return;
            }
            JsonNode message;
            try {
                message = json.readTree(data);
            } catch (IOException e) {
                LOG.log(Level.WARNING, "server " + server + " sent an event that is not JSON-RPC");
                return;
            }
            for (JsonNode one : message.isArray() ? message : List.of(message)) {
                each.accept(one);
            }
        }
    }

    private static String field(String line, int from) {
        String value = line.substring(from);
        return value.startsWith(" ") ? value.substring(1) : value;
    }

    /** A message on a request's stream that is not its answer: a notification, or a request to {@code agent}. */
    private void handle(JsonNode message, ToolCatalog.Agent agent, long deadline) {
        if (!message.has("method")) {
            return;
        }
        if (!message.has("id")) {
            notifications.accept(message);
            return;
        }
        answerAsked(message, agent, deadline);
    }

    /** A message on the session's stream: a notification, or a request of the server's made outside any request. */
    private void listened(JsonNode message) {
        if (!message.has("method")) {
            return;
        }
        if (!message.has("id")) {
            notifications.accept(message);
            return;
        }
        ToolCatalog.Agent agent = outsideRequests.get();
        ASKING.execute(() -> answerAsked(message, agent, System.nanoTime() + SHORT.toNanos()));
    }

    /**
     * Asks {@code agent} what the server asked and POSTs its answer (or error) back; null: the server is told nobody
     * can answer. An interrupt while the agent is asked (the call was cancelled) sends nothing: the cancel follows.
     */
    private void answerAsked(JsonNode request, ToolCatalog.Agent agent, long deadline) {
        String method = request.path("method").asText();
        ObjectNode response = json.createObjectNode();
        response.put("jsonrpc", "2.0");
        response.set("id", request.get("id"));
        try {
            if (agent == null) {
                throw new AgentRefusedException(McpSchema.ErrorCodes.METHOD_NOT_FOUND, "no agent can be asked " + method + " for this request (made"
                        + " from the command line, by code inside an execute_code call of the 2026-07-28 era, or by an"
                        + " agent that cannot be asked)");
            }
            JsonNode params = request.get("params");
            String answer = agent.ask(method, json.writeValueAsString(params != null && params.isObject() ? params
                    : json.createObjectNode()));
            response.set("result", json.readTree(answer));
        } catch (AgentRefusedException e) {
            response.putObject("error").put("code", e.code()).put("message", e.getMessage());
        } catch (IOException e) {
            response.putObject("error").put("code", McpSchema.ErrorCodes.INTERNAL_ERROR).put("message", "the agent's answer to " + method
                    + " is not JSON");
        }
        if (Thread.currentThread().isInterrupted()) {
            return;
        }
        try {
            // the session's server may be slower to take it than the call's own time allows: a few seconds at least
            HttpResponse<InputStream> posted = post(response, Math.max(deadline, System.nanoTime() + SHORT.toNanos()));
            check(posted, sessionId);
            closeQuietly(posted.body());
        } catch (HttpMcpException e) {
            LOG.log(Level.WARNING, "server " + server + ": answering its " + method + " failed: " + e.getMessage());
        }
    }

    private static boolean isAnswer(JsonNode message, long id) {
        return message.path("id").asLong(-1) == id && (message.has("result") || message.has("error"));
    }

    private JsonNode result(JsonNode message) {
        if (message.has("error")) {
            JsonNode error = message.get("error");
            throw HttpMcpException.rpcError(server, error.path("code").asInt(), error.path("message").asText("(no message)"),
                    error.get("data"));
        }
        return message.get("result");
    }

    private static void pause(Duration retry, long deadline) {
        long nanos = Math.min(retry.toNanos(), Math.max(0, deadline - System.nanoTime()));
        try {
            TimeUnit.NANOSECONDS.sleep(nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new HttpMcpException(Kind.CANCELLED, "the request was cancelled while its stream was to be resumed");
        }
    }

    /** Retry-After in seconds or as an HTTP date; null when absent or unreadable. */
    static Duration retryAfter(String value) {
        if (value == null || value.isBlank()) {
            return null;
        }
        try {
            return Duration.ofSeconds(Math.max(0, Long.parseLong(value.trim())));
        } catch (NumberFormatException e) {
            try {
                Duration until = Duration.between(ZonedDateTime.now(),
                        ZonedDateTime.parse(value.trim(), DateTimeFormatter.RFC_1123_DATE_TIME));
                return until.isNegative() ? Duration.ZERO : until;
            } catch (DateTimeParseException unreadable) {
                return null;
            }
        }
    }

    /** The start of a body that is not an answer: enough for its JSON-RPC error or an excerpt. */
    private static byte[] head(InputStream body) {
        try (InputStream in = body) {
            return in.readNBytes(64 * 1024);
        } catch (IOException e) {
            return new byte[0];
        }
    }

    /**
     * Why a connection could not be made: the JDK's client says ConnectException for a name that does not resolve too
     * (with UnresolvedAddressException as the cause), which is not a refusal.
     */
    private String connectProblem(ConnectException e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof UnresolvedAddressException || cause instanceof UnknownHostException) {
                return "host " + url.getHost() + " not found";
            }
        }
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            String message = cause.getMessage();
            if (message != null && !message.isBlank() && !message.toLowerCase(Locale.ROOT).contains("refused")) {
                return message.toLowerCase(Locale.ROOT);
            }
        }
        return "connection refused";
    }

    private static String describe(IOException e) {
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }

    private static void closeQuietly(InputStream in) {
        if (in == null) {
            return;
        }
        try {
            in.close();
        } catch (IOException e) {
            // closing what is gone already
        }
    }

    /** Ends a 2025-era session (DELETE, best effort) and stops listening. */
    @Override
    public void close() {
        closed = true;
        Thread thread = listener;
        if (thread != null) {
            thread.interrupt();
            closeQuietly(listening);
        }
        String session = sessionId;
        sessionId = null;
        if (session != null) {
            try {
                HttpRequest.Builder delete = HttpRequest.newBuilder(url).timeout(Duration.ofSeconds(2))
                        .header("Mcp-Session-Id", session).DELETE();
                headers.get().forEach(delete::header);
                http.send(delete.build(), HttpResponse.BodyHandlers.discarding());
            } catch (IOException | RuntimeException e) {
                // the server is gone; so is its session
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
