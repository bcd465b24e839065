package dev.execache.tools.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.tools.mcp.HttpMcpException.Kind;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.lang.System.Logger.Level;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
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
 * answer is resumed with {@code Last-Event-ID} after the server's {@code retry}.
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
    private static final Duration DEFAULT_RETRY = Duration.ofSeconds(1);
    private static final Duration LISTEN_RETRY_MAX = Duration.ofSeconds(30);

    private final String server;
    private final URI url;
    private final Supplier<Map<String, String>> headers;
    private final Set<String> headerNames;
    private final HttpClient http;
    private final ScheduledExecutorService timer;
    private final Consumer<JsonNode> notifications;
    private final Predicate<String> unauthorized;
    private final ObjectMapper json = new ObjectMapper();
    private final AtomicLong ids = new AtomicLong();

    private volatile String protocolVersion;
    private volatile boolean modern;
    private volatile String sessionId;
    private volatile JsonNode serverInfo;
    private volatile JsonNode capabilities;
    /** What the server said of itself (server/discover or initialize); null for nothing. */
    private volatile String instructions;
    private volatile boolean closed;
    /** The 2026-07-28 era's log level, sent in every request's _meta; null: none asked. */
    private volatile String logLevel;
    private volatile Thread listener;
    private volatile InputStream listening;
    /** Counted down when the notification stream is open (or cannot be), so that open() returns listening. */
    private final CountDownLatch streamOpen = new CountDownLatch(1);

    /**
     * @param headers the headers of every request, asked for each request (a token may be renewed)
     * @param headerNames the configured headers' names, for messages (never their values)
     * @param notifications gets every notification the server sends
     * @param unauthorized told the WWW-Authenticate header of a 401; says whether to send the request
     *     once more (with a new token)
     */
    StreamableHttpClient(String server, URI url, Supplier<Map<String, String>> headers, Set<String> headerNames,
            HttpClient http, ScheduledExecutorService timer, Consumer<JsonNode> notifications, Predicate<String> unauthorized) {
        this.server = server;
        this.url = url;
        this.headers = headers;
        this.headerNames = new TreeSet<>(headerNames);
        this.http = http;
        this.timer = timer;
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
        modern = false;
        protocolVersion = LEGACY;
        ObjectNode params = json.createObjectNode();
        params.put("protocolVersion", LEGACY);
        params.putObject("capabilities");
        params.putObject("clientInfo").put("name", "execache").put("version", "gateway");
        JsonNode initialized = exchange("initialize", params, deadline);
        protocolVersion = initialized.path("protocolVersion").asText(LEGACY);
        serverInfo = initialized.path("serverInfo");
        capabilities = initialized.path("capabilities");
        instructions = initialized.path("instructions").textValue();
        notify("notifications/initialized", deadline);
        // the session's own stream carries what the server sends outside a request: list changes, log messages
        if (sessionId != null && (capabilities.path("tools").path("listChanged").asBoolean(false)
                || capabilities.has("logging"))) {
            listen(deadline);
        }
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

    /** Sends a request and returns its result. */
    JsonNode request(String method, ObjectNode params, Duration timeout) {
        return exchange(method, params, System.nanoTime() + timeout.toNanos());
    }

    private JsonNode exchange(String method, ObjectNode params, long deadline) {
        try {
            return exchangeOnce(method, params, deadline);
        } catch (HttpMcpException e) {
            if (e.status() == 401 && unauthorized.test(e.challenge())) {
                return exchangeOnce(method, params, deadline);
            }
            throw e;
        }
    }

    private JsonNode exchangeOnce(String method, ObjectNode params, long deadline) {
        long id = ids.incrementAndGet();
        ObjectNode message = json.createObjectNode();
        message.put("jsonrpc", "2.0");
        message.put("id", id);
        message.put("method", method);
        message.set("params", withMeta(params));
        String sentSession = sessionId;
        HttpResponse<InputStream> response = post(message, deadline);
        if (method.equals("initialize")) {
            sessionId = response.headers().firstValue("mcp-session-id").orElse(null);
        }
        return answer(response, id, sentSession, deadline);
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
            meta.putObject(META + "clientCapabilities");
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
                    + UrlServerSettings.withoutQuery(url) + " (connection refused)");
        } catch (IOException e) {
            throw new HttpMcpException(Kind.UNREACHABLE, "server " + server + " cannot be reached at "
                    + UrlServerSettings.withoutQuery(url) + ": " + describe(e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new HttpMcpException(Kind.TIMEOUT, "the request to server " + server + " was interrupted");
        }
    }

    /** Turns a status that is not a success into the exception a person can act on. */
    private void check(HttpResponse<InputStream> response, String sentSession) {
        int status = response.statusCode();
        if (status / 100 == 2) {
            return;
        }
        String excerpt = excerpt(response.body());
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
        throw new HttpMcpException(Kind.PROTOCOL, status, null, "server " + server + " answered HTTP " + status
                + (excerpt.isEmpty() ? "" : ": " + excerpt));
    }

    private JsonNode answer(HttpResponse<InputStream> response, long id, String sentSession, long deadline) {
        check(response, sentSession);
        String type = response.headers().firstValue("content-type").orElse("").toLowerCase(Locale.ROOT);
        if (type.startsWith("text/event-stream")) {
            return fromStream(response.body(), id, deadline);
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
                handle(message);
            }
        } catch (IOException e) {
            throw new HttpMcpException(Kind.PROTOCOL, "server " + server + " answered with a body that is not JSON: " + describe(e));
        }
        throw new HttpMcpException(Kind.PROTOCOL, "server " + server + " answered without the answer to request " + id);
    }

    /** Reads an event stream until the answer to {@code id}, resuming it when it ends first. */
    private JsonNode fromStream(InputStream first, long id, long deadline) {
        InputStream in = first;
        String lastEventId = null;
        Duration retry = DEFAULT_RETRY;
        while (true) {
            Events events = new Events();
            ScheduledFuture<?> stop = closeAt(in, deadline);
            try {
                JsonNode found = events.read(in, message -> isAnswer(message, id));
                if (found != null) {
                    return result(found);
                }
            } finally {
                stop.cancel(false);
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
                        params.putObject("notifications").put("toolsListChanged", true);
                        message.set("params", withMeta(params));
                        request = base(deadline).header("Content-Type", "application/json")
                                .header("Accept", "application/json, text/event-stream")
                                .POST(HttpRequest.BodyPublishers.ofByteArray(json.writeValueAsBytes(message)));
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
                    if (!response.headers().firstValue("content-type").orElse("").startsWith("text/event-stream")) {
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
                    events.read(response.body(), message -> false);
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

    /** The events of one SSE stream, and the last event id and retry it gave. */
    private final class Events {
        String lastEventId;
        Duration retry;

        /** Hands every message to {@link #handle} until one that {@code wanted} accepts, which it returns; null at the end. */
        JsonNode read(InputStream in, Predicate<JsonNode> wanted) {
            StringBuilder data = new StringBuilder();
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = lines.readLine()) != null) {
                    if (line.isEmpty()) {
                        JsonNode found = dispatch(data.toString(), wanted);
                        data.setLength(0);
                        if (found != null) {
                            return found;
                        }
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
                return dispatch(data.toString(), wanted);
            } catch (IOException e) {
                return null;
            }
        }

        private JsonNode dispatch(String data, Predicate<JsonNode> wanted) {
            if (data.isBlank()) {
                return null;
            }
            JsonNode message;
            try {
                message = json.readTree(data);
            } catch (IOException e) {
                LOG.log(Level.WARNING, "server " + server + " sent an event that is not JSON-RPC");
                return null;
            }
            for (JsonNode one : message.isArray() ? message : List.of(message)) {
                if (wanted.test(one)) {
                    return one;
                }
                handle(one);
            }
            return null;
        }
    }

    private static String field(String line, int from) {
        String value = line.substring(from);
        return value.startsWith(" ") ? value.substring(1) : value;
    }

    private void handle(JsonNode message) {
        if (message.has("method") && !message.has("id")) {
            notifications.accept(message);
        }
    }

    private static boolean isAnswer(JsonNode message, long id) {
        return message.path("id").asLong(-1) == id && (message.has("result") || message.has("error"));
    }

    private JsonNode result(JsonNode message) {
        if (message.has("error")) {
            JsonNode error = message.get("error");
            throw HttpMcpException.rpcError(server, error.path("code").asInt(), error.path("message").asText("(no message)"));
        }
        return message.get("result");
    }

    private ScheduledFuture<?> closeAt(InputStream in, long deadline) {
        return timer.schedule(() -> closeQuietly(in), Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    }

    private static void pause(Duration retry, long deadline) {
        long nanos = Math.min(retry.toNanos(), Math.max(0, deadline - System.nanoTime()));
        try {
            TimeUnit.NANOSECONDS.sleep(nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new HttpMcpException(Kind.TIMEOUT, "waiting to resume a stream was interrupted");
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

    private static String excerpt(InputStream body) {
        try (InputStream in = body) {
            String text = new String(in.readNBytes(300), StandardCharsets.UTF_8).strip();
            return text.replaceAll("\\s+", " ");
        } catch (IOException e) {
            return "";
        }
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
