package dev.execache.tools.mcp;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.core.ToolResult;
import dev.execache.core.spi.ResultTtl;
import dev.execache.core.spi.AgentRefusedException;
import dev.execache.core.spi.CatalogTool;
import dev.execache.core.spi.ServerRefusedException;
import dev.execache.core.spi.ToolCallCancelledException;
import dev.execache.core.spi.ToolCatalog;
import dev.execache.tools.mcp.HttpMcpException.Kind;
import io.modelcontextprotocol.spec.McpSchema;
import java.lang.System.Logger.Level;
import java.net.http.HttpClient;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * One downstream server reached at a URL: its client, reached again with backoff when it cannot
 * be, and the tools it offered when it was last asked. Tools are listed again when the server says
 * they changed, and, in the 2026-07-28 era, when the {@code ttlMs} of its last list lapses.
 *
 * <p>What the server asks the agent (sampling, elicitation, roots) goes to the agent of the call it belongs to: in the
 * 2025 era a request on the call's stream, in the 2026-07-28 era an {@code input_required} answer, after which the call
 * is sent again with the agent's {@code inputResponses} and the server's {@code requestState}.
 */
final class UrlServer extends ServerLifecycle<StreamableHttpClient> {
    /** A ttlMs shorter than this is taken as this, so that a server cannot make execache list its tools in a loop. */
    private static final Duration MIN_TTL = Duration.ofSeconds(1);

    private final UrlServerSettings settings;
    private final HttpClient http;

    private boolean connecting;
    /** Why the server cannot be reached until its configuration changes (a variable that is not set); null otherwise. */
    private String unavailable;
    /** Until when the server asked (Retry-After) not to be called. */
    private Instant quietUntil = Instant.MIN;
    private ScheduledFuture<?> relist;
    /** Why the last attempt to reach the server failed; null once it is reached. */
    private HttpMcpException lastFailure;
    private ClientCredentialsTokens tokens;
    /** How the server is reached ({@link UrlServerSettings#identity}), known once its variables are resolved. */
    private volatile String identity;
    private final byte[] identityKey;
    /** The server's log messages, progress and the notifications passed on, as a command server's are. */
    private final ServerNotifications notifications;
    /** The agents of the calls in flight, oldest first: the session stream's requests go to the latest. */
    private final ConcurrentLinkedDeque<ToolCatalog.Agent> callers = new ConcurrentLinkedDeque<>();
    /** The tools left out for their header declarations, said once each (a 2026 server may be listed every second). */
    private final Set<String> toldNotOffered = ConcurrentHashMap.newKeySet();

    UrlServer(UrlServerSettings settings, byte[] identityKey, Duration callTimeout, ScheduledExecutorService scheduler,
            HttpClient http, Runnable toolsMayHaveChanged, ServerNotifications notifications, Clock clock) {
        super(settings, callTimeout, scheduler, toolsMayHaveChanged, clock);
        this.settings = settings;
        this.notifications = notifications;
        this.identityKey = identityKey;
        this.http = http;
    }

    @Override
    String identity() {
        return identity;
    }

    @Override
    boolean connect() {
        synchronized (this) {
            if (closed || connection != null || connecting || unavailable != null) {
                return connection != null;
            }
            connecting = true;
        }
        Map<String, String> headers;
        String secret;
        try {
            headers = settings.headerValues();
            secret = settings.clientSecret();
            identity = settings.identity(identityKey);
        } catch (UrlServerSettings.UnsetVariableException e) {
            synchronized (this) {
                unavailable = e.getMessage();
                connecting = false;
                notifyAll();
            }
            LOG.log(Level.WARNING, e.getMessage() + "; the server is unavailable");
            return false;
        }
        ClientCredentialsTokens oauth = settings.clientCredentials() == null ? null : tokens(secret);
        Supplier<Map<String, String>> perRequest = oauth == null ? () -> headers : () -> {
            Map<String, String> withToken = new LinkedHashMap<>(headers);
            withToken.put("Authorization", "Bearer " + oauth.token());
            return withToken;
        };
        Set<String> headerNames = new TreeSet<>(headers.keySet());
        if (oauth != null) {
            headerNames.add("Authorization (an OAuth token of client " + settings.clientCredentials().clientId() + ")");
        }
        StreamableHttpClient opened = new StreamableHttpClient(settings.name(), settings.url(), perRequest,
                headerNames, http, this::notified, challenge -> oauth != null && oauth.refused(challenge), this::agentOutsideCalls);
        try {
            opened.open(startTimeout());
            McpSchema.Implementation serverInfo = implementation(opened.serverInfo());
            List<CatalogTool> listed = list(opened);
            synchronized (this) {
                connecting = false;
                if (closed) {
                    opened.close();
                    return false;
                }
                connection = opened;
                tools = listed;
                failures = 0;
                lastFailure = null;
                notifyAll();
            }
            announce(describe(serverInfo) + ", MCP " + opened.protocolVersion() + " over HTTP", listed.size());
            askLogLevelAgain(opened);
            return true;
        } catch (RuntimeException e) {
            opened.close();
            Duration delay = nextBackoff(e);
            synchronized (this) {
                connecting = false;
                if (e instanceof HttpMcpException http) {
                    lastFailure = http;
                    if (http.retryAfter() != null) {
                        quietUntil = clock.instant().plus(http.retryAfter());
                    }
                }
                notifyAll();
            }
            LOG.log(Level.WARNING, (e instanceof HttpMcpException ? e.getMessage()
                    : "server " + settings.name() + ": cannot connect: " + e.getMessage())
                    + "; trying again in " + delay.toMillis() / 1000.0 + " s");
            scheduleConnect(delay);
            return false;
        }
    }

    /** Kept across reconnections, so that a token outlives a session; the secret is resolved once. */
    private synchronized ClientCredentialsTokens tokens(String secret) {
        if (tokens == null) {
            tokens = new ClientCredentialsTokens(settings.name(), settings.url(), settings.clientCredentials(), secret, http,
                    clock, startTimeout());
        }
        return tokens;
    }

    /** A session the server ended or that cannot be reached any more is reached again, with backoff. */
    @Override
    List<CatalogTool> listAgain(StreamableHttpClient current) {
        try {
            return list(current);
        } catch (HttpMcpException e) {
            if (e.kind() == Kind.SESSION_EXPIRED || e.kind() == Kind.UNREACHABLE) {
                lost(current, e);
            }
            throw e;
        }
    }

    /** A 2026-07-28 server's list is listed again when its ttlMs lapses, instead of at the fixed interval. */
    @Override
    void rediscover() {
        synchronized (this) {
            if (relist != null && !relist.isDone()) {
                return;
            }
        }
        refreshQuietly();
    }

    @Override
    String listingFailed(RuntimeException e) {
        return "listing the tools of server " + settings.name() + " failed: " + e.getMessage();
    }

    @Override
    String instructions(StreamableHttpClient current) {
        return current.instructions();
    }

    @Override
    String transport() {
        return "tcp";
    }

    /**
     * Calls the tool within the call timeout; what the server asks the agent during the call goes to {@code agent}
     * (null: it is refused, saying nobody can answer). When the calling thread is interrupted (the call was cancelled),
     * the request is ended (and a session's server told) and this throws a {@link ToolCallCancelledException}.
     */
    @Override
    ToolResult call(String tool, Map<String, Object> args, Consumer<Map<String, Object>> progress,
            ToolCatalog.Agent agent) {
        StreamableHttpClient current;
        try {
            current = awaitClient();
        } catch (InterruptedException e) {
            throw new ToolCallCancelledException("calling " + tool + " on server " + settings.name()
                    + " was cancelled while the server was being reached", false);
        }
        synchronized (this) {
            if (unavailable != null) {
                return failure(unavailable + "; the server is unavailable");
            }
            Instant now = clock.instant();
            if (now.isBefore(quietUntil)) {
                return failure("server " + settings.name() + " asked not to be called for "
                        + Math.max(1, Duration.between(now, quietUntil).toSeconds()) + " s more; try again then");
            }
        }
        if (current == null) {
            HttpMcpException why;
            synchronized (this) {
                why = lastFailure;
            }
            return failure(why != null && why.kind() == Kind.CREDENTIALS_REFUSED ? why.getMessage()
                    : "server " + settings.name() + " cannot be reached (execache keeps trying) and did not come up within "
                            + callTimeout.toMillis() / 1000.0 + " s" + (why == null ? "" : " (" + why.getMessage() + ")")
                            + "; try again shortly");
        }
        ObjectNode params = json.createObjectNode();
        params.put("name", tool);
        params.set("arguments", json.valueToTree(args));
        Map<String, String> trace = telemetry.current();
        if (!trace.isEmpty()) {
            // the client's StreamableHttpClient also sends these as the request's HTTP headers
            trace.forEach(params.putObject("_meta")::put);
        }
        String token = progress == null ? null : progressToken(settings.name());
        if (token != null) {
            (params.has("_meta") ? (ObjectNode) params.get("_meta") : params.putObject("_meta")).put("progressToken", token);
            notifications.onProgress(token, progress);
        }
        if (agent != null) {
            callers.addLast(agent);
        }
        try {
            return callSent(tool, current, params, agent);
        } finally {
            if (agent != null) {
                callers.removeLastOccurrence(agent);
            }
            if (token != null) {
                notifications.forgetProgress(token);
            }
        }
    }

    private ToolResult callSent(String tool, StreamableHttpClient current, ObjectNode params, ToolCatalog.Agent agent) {
        long deadline = System.nanoTime() + callTimeout.toNanos();
        try {
            return result(tool, callOnce(current, params, agent, deadline));
        } catch (HttpMcpException e) {
            if (e.kind() == Kind.SESSION_EXPIRED) {
                // the server ended the session (a restart, or its own expiry): a new one, once
                StreamableHttpClient again = reopen(current);
                if (again != null) {
                    try {
                        return result(tool, callOnce(again, params, agent, deadline));
                    } catch (HttpMcpException second) {
                        return failed(tool, again, second);
                    }
                }
            }
            return failed(tool, current, e);
        } catch (AgentRefusedException e) {
            if (Thread.interrupted()) {
                // the call was cancelled while its agent was asked; the exception says so, as for a command server
                throw new ToolCallCancelledException("calling " + tool + " on server " + settings.name()
                        + " was cancelled after it was sent", true);
            }
            return failure("calling " + tool + " on server " + settings.name() + " failed: the server"
                    + " asked the agent something and got no answer: " + e.getMessage());
        }
    }

    /**
     * One tool call, with its input rounds (2026-07-28): while the server answers {@code input_required}, the agent is
     * asked each request and the call is sent again with the answers and the server's {@code requestState}, all
     * within the call's time.
     */
    private JsonNode callOnce(StreamableHttpClient current, ObjectNode params, ToolCatalog.Agent agent, long deadline) {
        ObjectNode sent = params;
        while (true) {
            JsonNode answer = current.request("tools/call", sent, left(deadline), agent);
            if (!"input_required".equals(answer.path("resultType").asText())) {
                return answer;
            }
            ObjectNode responses = json.createObjectNode();
            for (Map.Entry<String, JsonNode> asked : answer.path("inputRequests").properties()) {
                String method = asked.getValue().path("method").asText();
                if (agent == null) {
                    throw new AgentRefusedException(McpSchema.ErrorCodes.METHOD_NOT_FOUND, "no agent can be asked "
                            + method + " for this call (made from the command line or by code inside an execute_code"
                            + " call of the 2026-07-28 era)");
                }
                JsonNode given = asked.getValue().get("params");
                try {
                    responses.set(asked.getKey(), json.readTree(agent.ask(method, json.writeValueAsString(
                            given != null && given.isObject() ? given : json.createObjectNode()))));
                } catch (JsonProcessingException e) {
                    throw new AgentRefusedException(McpSchema.ErrorCodes.INTERNAL_ERROR, "the agent's answer to "
                            + method + " is not JSON");
                }
                if (Thread.currentThread().isInterrupted()) {
                    throw new HttpMcpException(Kind.CANCELLED, "the call was cancelled while the agent was asked");
                }
            }
            sent = params.deepCopy();
            sent.set("inputResponses", responses);
            if (answer.has("requestState")) {
                sent.set("requestState", answer.get("requestState"));
            }
        }
    }

    private static Duration left(long deadline) {
        return Duration.ofNanos(Math.max(1, deadline - System.nanoTime()));
    }

    private ToolResult result(String tool, JsonNode result) {
        ObjectNode copy = result.deepCopy();
        copy.remove("resultType");
        try {
            return new ToolResult(json.writeValueAsString(copy), copy.path("isError").asBoolean(false));
        } catch (JsonProcessingException e) {
            return failure("the answer of " + settings.name() + SEPARATOR + tool
                    + " cannot be written as JSON: " + e.getOriginalMessage());
        }
    }

    private ToolResult failed(String tool, StreamableHttpClient current, HttpMcpException e) {
        switch (e.kind()) {
            case CANCELLED -> {
                // the exception says it, not the thread's interrupt, as for a command server: the caller still stores
                Thread.interrupted();
                throw new ToolCallCancelledException("calling " + tool + " on server " + settings.name()
                        + " was cancelled after it was sent", true);
            }
            case RETRY_LATER -> {
                if (e.retryAfter() != null) {
                    synchronized (this) {
                        quietUntil = clock.instant().plus(e.retryAfter());
                    }
                }
            }
            case UNREACHABLE, SESSION_EXPIRED -> lost(current, e);
            default -> {
            }
        }
        return failure("calling " + tool + " on server " + settings.name() + " failed: " + e.getMessage());
    }

    /** A new session in place of one the server ended; null when that fails too. */
    private StreamableHttpClient reopen(StreamableHttpClient expired) {
        synchronized (this) {
            if (connection != expired) {
                return connection;
            }
            connection = null;
        }
        expired.close();
        LOG.log(Level.INFO, "server " + settings.name() + ": the session ended; starting a new one");
        connect();
        try {
            // another thread may be the one reaching it (a call of its own, or the scheduled reconnection)
            return awaitClient();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** The server cannot be reached any more: reach it again with backoff. */
    private void lost(StreamableHttpClient current, HttpMcpException why) {
        Duration delay;
        synchronized (this) {
            if (!drop(current)) {
                return;
            }
            delay = nextBackoff(why);
        }
        current.close();
        LOG.log(Level.WARNING, why.getMessage() + "; reaching it again in " + delay.toMillis() / 1000.0 + " s");
        scheduleConnect(delay);
    }

    private void notified(JsonNode notification) {
        String method = notification.path("method").asText();
        if ("notifications/tools/list_changed".equals(method)) {
            schedule(this::refreshQuietly, Duration.ZERO);
            return;
        }
        JsonNode params = notification.get("params");
        notifications.take(method, params != null && params.isObject() ? json.convertValue(params, OBJECT) : null);
    }

    @Override
    Set<String> features(StreamableHttpClient current) {
        JsonNode declared = current.capabilities();
        return declared == null ? Set.of()
                : features(declared.has("resources"), declared.has("prompts"), declared.has("completions"));
    }

    /** A request other than a tool call, sent as the agent sent it and answered as the server answered it. */
    @Override
    String ask(String method, String params) {
        if (!ASKABLE.contains(method)) {
            throw cannotAsk(settings.name(), method);
        }
        StreamableHttpClient current;
        try {
            current = awaitClient();
        } catch (InterruptedException e) {
            throw askingCancelled(settings.name(), method);
        }
        if (current == null) {
            String why;
            synchronized (this) {
                why = whyDown();
            }
            throw new ServerRefusedException(McpSchema.ErrorCodes.INTERNAL_ERROR, "server " + settings.name()
                    + " cannot be reached" + (why == null ? "" : " (" + why + ")") + "; try again shortly");
        }
        ObjectNode given;
        try {
            given = json.readValue(params, ObjectNode.class);
        } catch (JsonProcessingException e) {
            throw new ServerRefusedException(McpSchema.ErrorCodes.INVALID_PARAMS, "the request to server "
                    + settings.name() + " is not what " + method + " takes: " + e.getOriginalMessage());
        }
        try {
            return answered(askOnce(current, method, given));
        } catch (HttpMcpException e) {
            if (e.kind() == Kind.CANCELLED) {
                throw askingCancelled(settings.name(), method);
            }
            if (e.kind() == Kind.SESSION_EXPIRED) {
                StreamableHttpClient again = reopen(current);
                if (again != null) {
                    try {
                        return answered(askOnce(again, method, given));
                    } catch (HttpMcpException second) {
                        throw refused(method, second);
                    }
                }
            }
            throw refused(method, e);
        }
    }

    private JsonNode askOnce(StreamableHttpClient current, String method, ObjectNode params) {
        return current.request(method, params, callTimeout);
    }

    private String answered(JsonNode result) {
        ObjectNode copy = result.deepCopy();
        copy.remove("resultType");
        try {
            return json.writeValueAsString(copy);
        } catch (JsonProcessingException e) {
            throw new ServerRefusedException(McpSchema.ErrorCodes.INTERNAL_ERROR, "the answer of server "
                    + settings.name() + " cannot be written as JSON: " + e.getOriginalMessage());
        }
    }

    private ServerRefusedException refused(String method, HttpMcpException e) {
        HttpMcpException.JsonRpcError error = e.error();
        return error != null ? new ServerRefusedException(error.code(), error.message())
                : new ServerRefusedException(McpSchema.ErrorCodes.INTERNAL_ERROR, "asking server " + settings.name()
                        + " " + method + " failed: " + e.getMessage());
    }

    /** The agent a request on the session's stream goes to: the latest call's, else the session's; null: none. */
    private ToolCatalog.Agent agentOutsideCalls() {
        ToolCatalog.Agent latest = callers.peekLast();
        return latest != null ? latest : sessionAgent;
    }

    @Override
    void rootsChanged(StreamableHttpClient current) {
        schedule(current::rootsChanged, Duration.ZERO);
    }

    /**
     * logging/setLevel, to a server of a session that declared it logs; in the 2026-07-28 era, where the level travels
     * per request, every request carries it in {@code _meta} and the messages come on that request's stream.
     */
    @Override
    void askLogLevel(StreamableHttpClient current, McpSchema.LoggingLevel level) {
        if (current.capabilities() == null || !current.capabilities().has("logging")) {
            return;
        }
        if (current.modern()) {
            current.logLevel(level.name().toLowerCase(java.util.Locale.ROOT));
            return;
        }
        ObjectNode params = json.createObjectNode();
        params.put("level", level.name().toLowerCase(java.util.Locale.ROOT));
        try {
            current.request(McpSchema.METHOD_LOGGING_SET_LEVEL, params, callTimeout);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "server " + settings.name() + ": setting its log level failed: " + e.getMessage());
        }
    }

    @Override
    List<CatalogTool> list(StreamableHttpClient current) {
        McpSchema.Implementation serverInfo = implementation(current.serverInfo());
        List<CatalogTool> listed = new ArrayList<>();
        Map<String, McpHeaders.Declarations> headers = new LinkedHashMap<>();
        String cursor = null;
        long ttl = -1;
        do {
            ObjectNode params = json.createObjectNode();
            if (cursor != null) {
                params.put("cursor", cursor);
            }
            JsonNode page = current.request("tools/list", params, startTimeout());
            for (JsonNode tool : page.path("tools")) {
                McpHeaders.Declarations declared;
                try {
                    declared = McpHeaders.declarations(tool.path("inputSchema"));
                } catch (McpHeaders.InvalidDeclarationException e) {
                    // the spec has a Streamable HTTP client leave such a tool out, so that the others stay usable
                    String why = "tool " + tool.path("name").asText() + " is not offered: its input schema declares"
                            + " headers wrongly: " + e.getMessage();
                    if (toldNotOffered.add(why)) {
                        LOG.log(Level.WARNING, "server " + settings.name() + ": " + why);
                    }
                    continue;
                }
                if (!declared.headers().isEmpty()) {
                    headers.put(tool.path("name").asText(), declared);
                }
                listed.add(catalogTool(json.convertValue(tool, McpSchema.Tool.class), serverInfo,
                        json.convertValue(tool, OBJECT)));
            }
            Duration pageTtl = ResultTtl.read(page.path("ttlMs").numberValue(), null).ttl();
            if (pageTtl != null) {
                ttl = ttl < 0 ? pageTtl.toMillis() : Math.min(ttl, pageTtl.toMillis());
            }
            cursor = page.path("nextCursor").isTextual() ? page.get("nextCursor").asText() : null;
        } while (cursor != null && !cursor.isEmpty());
        current.toolHeaders(headers);
        if (current.modern() && ttl >= 0) {
            relistAfter(Duration.ofMillis(Math.max(ttl, MIN_TTL.toMillis())));
        }
        return List.copyOf(listed);
    }

    private synchronized void relistAfter(Duration ttl) {
        if (relist != null) {
            relist.cancel(false);
        }
        relist = schedule(this::refreshQuietly, ttl);
    }

    private static McpSchema.Implementation implementation(JsonNode serverInfo) {
        if (serverInfo == null || !serverInfo.isObject()) {
            return null;
        }
        return new McpSchema.Implementation(serverInfo.path("name").asText(null), serverInfo.path("version").asText(null));
    }

    private StreamableHttpClient awaitClient() throws InterruptedException {
        return awaitConnection(callTimeout, () -> unavailable == null
                && (lastFailure == null || lastFailure.kind() != Kind.CREDENTIALS_REFUSED));
    }

    /** Doubling from 1 s to 30 s, and never sooner than the server's Retry-After. */
    private Duration nextBackoff(RuntimeException why) {
        Duration backoff = nextBackoff();
        if (why instanceof HttpMcpException http && http.retryAfter() != null
                && http.retryAfter().toMillis() > backoff.toMillis()) {
            return Duration.ofMillis(http.retryAfter().toMillis());
        }
        return backoff;
    }

    @Override
    String whyDown() {
        return unavailable != null ? unavailable : lastFailure != null ? lastFailure.getMessage() : null;
    }

    @Override
    boolean starting() {
        return unavailable == null && (lastFailure == null || connecting);
    }

    @Override
    long pid() {
        return -1;
    }

    @Override
    void close() {
        StreamableHttpClient current;
        synchronized (this) {
            current = markClosed();
            if (relist != null) {
                relist.cancel(false);
            }
        }
        if (current != null) {
            current.close();
        }
    }
}
