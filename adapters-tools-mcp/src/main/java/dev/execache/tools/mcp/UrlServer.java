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
import java.util.Objects;
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
    /** The failure last said at WARNING: the same one again, on each retry, is said only at DEBUG until it is up. */
    private String toldFailure;
    private ClientCredentialsTokens tokens;
    /** Each person's token, for a server reached as each caller's person ({@code identity: exchange}); null otherwise. */
    private TokenExchange exchange;
    /** The person a call on this thread is made as, and their token for the server; unset: execache's own credential. */
    private final ThreadLocal<AsPerson> asPerson = new ThreadLocal<>();
    /** The person's sign-in, for a server reached with one ({@link UrlServerSettings#signsIn}); null otherwise. */
    private final SignInTokens signIn;
    private final SignIns signIns;
    /** One sign-in through an agent at a time: the calls that wait for it go on with it. */
    private final Object signingIn = new Object();
    /** How long a person has to sign in when an agent asked them to. */
    private static final Duration SIGN_IN_WAIT = Duration.ofMinutes(5);
    /** The sign-in ({@link SignInTokens#who}) the last connection was attempted with: a new one reconnects. */
    private String attemptedAs;
    /**
     * The person signed in while a connection was being attempted without that sign-in: once that attempt ends,
     * the server is reached again at once, and its refusal (for the old sign-in) is not the server's last word.
     */
    private boolean connectAgain;
    /** How the server is reached ({@link UrlServerSettings#identity}), known once its variables are resolved. */
    private volatile String identity;
    private final byte[] identityKey;
    /** The server's log messages, progress and the notifications passed on, as a command server's are. */
    private final ServerNotifications notifications;
    /** Makes a client of the server as the last connection did (its headers and credentials). */
    private Supplier<StreamableHttpClient> clients;
    /** The x-mcp-header declarations of the tools last listed, for every connection their calls take. */
    private Map<String, McpHeaders.Declarations> toolHeaders = Map.of();
    /** A session of the initialize era beside a 2026-07-28 connection, for the agents of that era; null: none. */
    private StreamableHttpClient eraSession;
    /** The server refused a session of the initialize era: it speaks only 2026-07-28. */
    private boolean eraSessionRefused;
    private final Object eraSessionOpening = new Object();
    /** The agents of the calls in flight, oldest first: the session stream's requests go to the latest. */
    private final ConcurrentLinkedDeque<ToolCatalog.Agent> callers = new ConcurrentLinkedDeque<>();
    /** The tools left out for their header declarations, said once each (a 2026 server may be listed every second). */
    private final Set<String> toldNotOffered = ConcurrentHashMap.newKeySet();
    /** The names of the tools its last list named and left out: never called as tools it did not list. */
    private Set<String> leftOut = Set.of();

    /**
     * @param signIns where a person's sign-ins are kept, for a server that asks for one; null: such a
     *     server's 401 is a refusal like any other
     */
    UrlServer(UrlServerSettings settings, byte[] identityKey, Duration callTimeout, ScheduledExecutorService scheduler,
            HttpClient http, Runnable toolsMayHaveChanged, ServerNotifications notifications, Clock clock,
            SignIns signIns) {
        super(settings, callTimeout, scheduler, toolsMayHaveChanged, clock);
        this.settings = settings;
        this.signIns = signIns;
        this.signIn = signIns != null && settings.signsIn()
                ? new SignInTokens(settings, signIns, http, clock, startTimeout()) : null;
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
        String as = signIn == null ? null : signIn.who();
        synchronized (this) {
            attemptedAs = as;
        }
        try {
            headers = settings.headerValues();
            secret = settings.clientSecret();
            identity = settings.identity(identityKey, signIn == null ? null : signIn.account());
        } catch (UrlServerSettings.UnsetVariableException e) {
            synchronized (this) {
                unavailable = e.getMessage();
                connecting = false;
                notifyAll();
            }
            LOG.log(Level.WARNING, e.getMessage() + "; the server is unavailable");
            return false;
        }
        ClientCredentialsTokens oauth = secret == null ? null : tokens(secret);
        TokenExchange exchanged = secret == null || !settings.perPerson() ? null : exchange(secret);
        Supplier<Map<String, String>> perRequest = () -> {
            AsPerson person = asPerson.get();
            String token = person != null ? person.token : oauth != null ? oauth.token() : signIn != null ? signIn.token() : null;
            if (token == null) {
                return headers;
            }
            Map<String, String> withToken = new LinkedHashMap<>(headers);
            withToken.put("Authorization", "Bearer " + token);
            return withToken;
        };
        Set<String> headerNames = new TreeSet<>(headers.keySet());
        if (exchanged != null) {
            headerNames.add("Authorization (each person's token, which client " + settings.clientCredentials().clientId()
                    + " exchanges for them; its own token of client credentials for listing)");
        } else if (oauth != null) {
            headerNames.add("Authorization (an OAuth token of client " + settings.clientCredentials().clientId() + ")");
        } else if (as != null) {
            headerNames.add("Authorization (your sign-in; to sign in again: execache login " + settings.name() + ")");
        }
        Supplier<StreamableHttpClient> client = () -> new StreamableHttpClient(settings.name(), settings.url(),
                perRequest, headerNames, http, this::notified, challenge -> asPerson.get() != null
                        ? asPerson.get().refused(exchanged) : oauth != null ? oauth.refused(challenge)
                        : signIn != null && signIn.refused(challenge), this::agentOutsideCalls);
        StreamableHttpClient opened = client.get();
        synchronized (this) {
            clients = client;
        }
        try {
            opened.open(startTimeout());
            McpSchema.Implementation serverInfo = implementation(opened.serverInfo());
            List<CatalogTool> listed = list(opened);
            boolean again = false;
            boolean wasClosed;
            synchronized (this) {
                connecting = false;
                wasClosed = closed;
                if (connectAgain && !closed) {
                    connectAgain = false;
                    again = true;
                } else if (!closed) {
                    connection = opened;
                    tools = listed;
                    failures = 0;
                    lastFailure = null;
                    toldFailure = null;
                    notifyAll();
                }
            }
            if (again) {
                // begun before the person signed in: its identity (and so its answers' key) is the old sign-in's
                opened.close();
                return connect();
            }
            if (wasClosed) {
                opened.close();
                return false;
            }
            announce(describe(serverInfo) + ", MCP " + opened.protocolVersion() + " over HTTP", listed.size());
            askLogLevelAgain(opened);
            return true;
        } catch (RuntimeException e) {
            opened.close();
            boolean again;
            synchronized (this) {
                again = connectAgain && !closed;
                connectAgain = false;
                connecting = connecting && !again;
            }
            if (again) {
                // begun before the person signed in: what it met says nothing of the new sign-in
                LOG.log(Level.DEBUG, "server " + settings.name() + ": an attempt begun before the sign-in ended ("
                        + e.getMessage() + "); reaching it again with the sign-in");
                return connect();
            }
            Duration delay = nextBackoff(e);
            String reason = e instanceof HttpMcpException ? e.getMessage()
                    : "server " + settings.name() + ": cannot connect: " + e.getMessage();
            boolean tell;
            synchronized (this) {
                connecting = false;
                if (e instanceof HttpMcpException http) {
                    lastFailure = http;
                    if (http.retryAfter() != null) {
                        quietUntil = clock.instant().plus(http.retryAfter());
                    }
                }
                tell = isNews(reason);
                notifyAll();
            }
            LOG.log(tell ? Level.WARNING : Level.DEBUG, reason + "; trying again in " + seconds(delay)
                    + (tell ? ", then with backoff while it fails" : ""));
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

    private synchronized TokenExchange exchange(String secret) {
        if (exchange == null) {
            exchange = new TokenExchange(settings.name(), settings.url(), settings.clientCredentials(), secret, http, clock,
                    startTimeout());
        }
        return exchange;
    }

    private synchronized TokenExchange exchange() {
        return exchange;
    }

    /** A call made as a person: their token for the server, exchanged again (once) when the server refuses it. */
    private static final class AsPerson {
        private final ToolCatalog.Person person;
        private String token;
        private boolean renewed;

        AsPerson(ToolCatalog.Person person, String token) {
            this.person = person;
            this.token = token;
        }

        /** The server refused the token: whether a new exchange gave another to send. */
        boolean refused(TokenExchange exchange) {
            if (exchange == null || renewed) {
                return false;
            }
            renewed = true;
            exchange.refused(person, token);
            token = exchange.token(person);
            return true;
        }
    }

    /**
     * The person signed in, out, or as someone else since the connection was made (here or by another
     * process): the connection, its tools and their identity were the old sign-in's, so it is made again.
     */
    private void reconnectIfSignInChanged() {
        reconnectForSignIn(false);
    }

    /** As {@link #reconnectIfSignInChanged}; {@code signedIn}: the person just signed in, maybe as they were. */
    private void reconnectForSignIn(boolean signedIn) {
        if (signIn == null) {
            return;
        }
        String now = signIn.who();
        StreamableHttpClient stale;
        synchronized (this) {
            boolean changed = !Objects.equals(now, attemptedAs) || signedIn && connection == null;
            if (changed && connecting && !closed) {
                // an attempt under way was begun without this sign-in: whoever waits for the server waits for the
                // attempt that follows it, not for the refusal it may bring back
                connectAgain = true;
                lastFailure = null;
                return;
            }
            if (!changed || connecting || closed) {
                return;
            }
            stale = connection;
            connection = null;
            tools = List.of();
            lastFailure = null;
            failures = 0;
        }
        if (stale != null) {
            stale.close();
        }
        LOG.log(Level.INFO, "server " + settings.name() + ": " + (now == null ? "signed out" : "signed in") + "; reaching it again");
        connect();
    }

    /**
     * The server waits for a person's sign-in: {@code agent} is asked to have its person sign in (a
     * URL-mode elicitation with the authorization URL); once the browser came back with the sign-in,
     * the server is reached with it. Returns whether it is up now; false at once when it waits for no
     * sign-in, or the agent cannot be asked or declined.
     */
    boolean signInThroughAgent(ToolCatalog.Agent agent) throws InterruptedException {
        if (signIn == null || agent == null) {
            return false;
        }
        synchronized (signingIn) {
            // three times at most: a server may refuse a new sign-in too (it wants more scope than it said, or its
            // authorization server changed meanwhile), and says why; and a reconnection begun before the sign-in
            // was kept may have been refused without it
            for (int attempt = 0; attempt < 3; attempt++) {
                reconnectIfSignInChanged();
                String refusal;
                synchronized (this) {
                    if (connection != null) {
                        return true;
                    }
                    if (lastFailure == null || lastFailure.kind() != Kind.CREDENTIALS_REFUSED) {
                        return false;
                    }
                    refusal = lastFailure.challenge();
                }
                if (!signInWith(agent, refusal)) {
                    return false;
                }
                if (awaitClient() != null) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * A call was refused for the sign-in's sake ({@code refusal}, the server's WWW-Authenticate): it expired, the
     * server's authorization server changed, or the server wants more scope. An agent that is its person's own is
     * asked to have them sign in again, once per call; returns whether they did (the call may be sent again).
     */
    private boolean signInAgain(ToolCatalog.Agent agent, String refusal) {
        if (signIn == null || agent == null || !agent.signsIn()) {
            return false;
        }
        String before = signIn.who();
        synchronized (signingIn) {
            // a call refused at the same time may have had the person sign in meanwhile
            if (Objects.equals(before, signIn.who()) && !signInWith(agent, refusal)) {
                return false;
            }
            reconnectForSignIn(true);
        }
        try {
            return awaitClient() != null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Has {@code agent} ask its person to sign in (a URL-mode elicitation); reaches the server with the new sign-in. */
    private boolean signInWith(ToolCatalog.Agent agent, String refusal) {
        String elicitation = "execache-sign-in-" + settings.name() + "-" + System.nanoTime();
        try {
            new PersonSignIn(settings, signIns, clock, startTimeout()).signIn(0, url -> {
                ObjectNode params = McpJson.JSON.createObjectNode();
                params.put("mode", "url");
                params.put("elicitationId", elicitation);
                params.put("url", url.toString());
                params.put("message", "Server " + settings.name() + " asks you to sign in. Open the link and sign in;"
                        + " the call goes on once you have.");
                String action;
                try {
                    action = McpJson.JSON.readTree(agent.ask("elicitation/create", params.toString())).path("action").asText();
                } catch (JsonProcessingException e) {
                    action = "";
                }
                if (!action.equals("accept")) {
                    throw new PersonSignIn.SignInException("server " + settings.name() + ": the sign-in was declined");
                }
            }, SIGN_IN_WAIT, refusal);
        } catch (AgentRefusedException e) {
            LOG.log(Level.INFO, "server " + settings.name() + ": no sign-in through the agent: " + e.getMessage());
            return false;
        } catch (PersonSignIn.SignInException e) {
            // the person tried: they are told why it did not work
            LOG.log(Level.WARNING, "no sign-in through the agent: " + e.getMessage());
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
        reconnectForSignIn(true);
        return true;
    }

    @Override
    void awaitStart() throws InterruptedException {
        reconnectIfSignInChanged();
        super.awaitStart();
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
        return call(tool, args, progress, agent, null);
    }

    /**
     * As {@link #call(String, Map, Consumer, ToolCatalog.Agent)}, made for {@code person} (null: nobody in
     * particular): a server reached as each caller's person gets their own token, which execache exchanged for them;
     * a call for nobody is refused there, saying why.
     */
    ToolResult call(String tool, Map<String, Object> args, Consumer<Map<String, Object>> progress,
            ToolCatalog.Agent agent, ToolCatalog.Person person) {
        if (settings.perPerson() && person == null) {
            return failure("server " + settings.name() + " is reached as each agent's own person (identity: exchange),"
                    + " and this call is made for nobody: call it through serve --http with OAuth (--oauth-issuer), whose"
                    + " agents' tokens execache exchanges for the server");
        }
        reconnectIfSignInChanged();
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
        AsPerson as = null;
        if (person != null && settings.perPerson()) {
            TokenExchange exchanged = exchange();
            try {
                as = new AsPerson(person, exchanged.token(person));
            } catch (HttpMcpException e) {
                return failure(e.getMessage());
            }
        }
        ObjectNode params = McpJson.JSON.createObjectNode();
        params.put("name", tool);
        params.set("arguments", McpJson.JSON.valueToTree(args));
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
        current = forAgent(current, agent);
        if (agent != null) {
            callers.addLast(agent);
            if (agent.capabilities() != null && current.modern()) {
                // the agent's own: a server asks only what the agent can answer, and refuses (-32021) what it needs
                ObjectNode meta = params.has("_meta") ? (ObjectNode) params.get("_meta") : params.putObject("_meta");
                try {
                    JsonNode declared = McpJson.JSON.readTree(agent.capabilities());
                    if (declared.path("extensions") instanceof ObjectNode extensions) {
                        // a plain call gets a plain result: tasks take their own way through execache (ask)
                        extensions.remove(TASKS_EXTENSION);
                    }
                    meta.set(StreamableHttpClient.CLIENT_CAPABILITIES_META, declared);
                } catch (JsonProcessingException e) {
                    // not an object: execache's own are declared
                }
            }
        }
        if (as != null) {
            asPerson.set(as);
        }
        try {
            return callSent(tool, current, params, agent);
        } finally {
            asPerson.remove();
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
            if (refusedForTheSignIn(e) && signInAgain(agent, e.challenge())) {
                // signed in again (with more scope, or at the server's new authorization server): sent again, once
                StreamableHttpClient again = forAgent(connected(), agent);
                if (again != null) {
                    try {
                        return result(tool, callOnce(again, params, agent, System.nanoTime() + callTimeout.toNanos()));
                    } catch (HttpMcpException second) {
                        return failed(tool, again, second);
                    } catch (AgentRefusedException second) {
                        return failure("calling " + tool + " on server " + settings.name() + " failed: the server"
                                + " asked the agent something and got no answer: " + second.getMessage());
                    }
                }
            }
            if (e.kind() == Kind.SESSION_EXPIRED) {
                // the server ended the session (a restart, or its own expiry): a new one, once
                StreamableHttpClient again = dropEraSession(current) ? forAgent(connected(), agent) : reopen(current);
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
        return withRounds(current, "tools/call", params, agent, deadline);
    }

    /**
     * One request, with its input rounds (2026-07-28): {@link #callOnce} for any request. Without an agent, an
     * {@code input_required} answer is refused, saying nobody can be asked.
     */
    private JsonNode withRounds(StreamableHttpClient current, String method, ObjectNode params,
            ToolCatalog.Agent agent, long deadline) {
        ObjectNode sent = params;
        String answeredBefore = agent != null && agent.asksRounds() && current.modern() ? agent.givenAnswers() : null;
        if (answeredBefore != null) {
            // the agent's answers and requestState as it gave them: the server judges them
            ObjectNode withGiven = params.deepCopy();
            try {
                McpJson.JSON.readTree(answeredBefore).properties().forEach(field -> withGiven.set(field.getKey(), field.getValue()));
                sent = withGiven;
            } catch (JsonProcessingException e) {
                throw new AgentRefusedException(McpSchema.ErrorCodes.INVALID_PARAMS, "the agent's answers are not JSON");
            }
        }
        while (true) {
            JsonNode answer = current.request(method, sent, left(deadline), agent);
            if (!"input_required".equals(answer.path("resultType").asText())) {
                return answer;
            }
            JsonNode state = answer.get("requestState");
            if (agent != null && agent.asksRounds()) {
                // an agent of the same era gets the round as the server made it, and answers it as it chooses
                sent = params.deepCopy();
                try {
                    sent.set("inputResponses", McpJson.JSON.readTree(agent.askRound(McpJson.JSON.writeValueAsString(
                            answer.path("inputRequests")), state != null && state.isTextual() ? state.asText() : null)));
                } catch (JsonProcessingException e) {
                    throw new AgentRefusedException(McpSchema.ErrorCodes.INTERNAL_ERROR, "the agent's answers are not"
                            + " JSON");
                }
                if (state != null) {
                    sent.set("requestState", state);
                }
                continue;
            }
            ObjectNode responses = McpJson.JSON.createObjectNode();
            for (Map.Entry<String, JsonNode> asked : answer.path("inputRequests").properties()) {
                String request = asked.getValue().path("method").asText();
                if (agent == null) {
                    throw new AgentRefusedException(McpSchema.ErrorCodes.METHOD_NOT_FOUND, "no agent can be asked "
                            + request + " for this call (made from the command line or by code inside an execute_code"
                            + " call of the 2026-07-28 era)");
                }
                JsonNode given = asked.getValue().get("params");
                try {
                    responses.set(asked.getKey(), McpJson.JSON.readTree(agent.ask(request, McpJson.JSON.writeValueAsString(
                            given != null && given.isObject() ? given : McpJson.JSON.createObjectNode()))));
                } catch (JsonProcessingException e) {
                    throw new AgentRefusedException(McpSchema.ErrorCodes.INTERNAL_ERROR, "the agent's answer to "
                            + request + " is not JSON");
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

    /**
     * A refusal a new sign-in may help: 401 (the sign-in expired or was revoked, or the server's authorization server
     * changed) or 403 for want of scope ({@code insufficient_scope}, RFC 6750 3.1), of a server reached with one.
     */
    private boolean refusedForTheSignIn(HttpMcpException e) {
        return signIn != null && e.kind() == Kind.CREDENTIALS_REFUSED && (e.status() == 401
                || e.status() == 403 && e.challenge() != null && e.challenge().contains("insufficient_scope"));
    }

    private ToolResult result(String tool, JsonNode result) {
        ObjectNode copy = result.deepCopy();
        copy.remove("resultType");
        try {
            return new ToolResult(McpJson.JSON.writeValueAsString(copy), copy.path("isError").asBoolean(false));
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
            case RPC_ERROR -> {
                if (e.error() != null) {
                    // the server refused the request itself (a client capability the agent lacks, a tampered
                    // requestState, bad params): the agent gets the server's error, as it would directly
                    throw new ServerRefusedException(e.error().code(), e.error().message(),
                            e.error().data() == null ? null : e.error().data().toString());
                }
            }
            default -> {
            }
        }
        return failure("calling " + tool + " on server " + settings.name() + " failed: " + e.getMessage());
    }

    /**
     * Where a call of {@code agent} goes: an agent of the initialize era (asked one request at a time, on the call's
     * stream) calls a 2026-07-28 server through a session of that era, opened when first needed, where the server
     * keeps them: a server speaks to each client in the client's era (it asks a 2025 client on the call's stream,
     * where a 2026-07-28 request has none), so that agent gets what it would get directly. Else the connection,
     * whose input_required rounds reach the agent as its own requests.
     */
    private StreamableHttpClient forAgent(StreamableHttpClient current, ToolCatalog.Agent agent) {
        if (current == null || !current.modern() || agent == null || agent.asksRounds()) {
            return current;
        }
        synchronized (eraSessionOpening) {
            Supplier<StreamableHttpClient> client;
            synchronized (this) {
                if (eraSession != null) {
                    return eraSession;
                }
                if (eraSessionRefused || closed || clients == null) {
                    return current;
                }
                client = clients;
            }
            StreamableHttpClient opened = client.get();
            // its calls carry the tools' declared headers too, in either era
            opened.toolHeaders(toolHeaders());
            try {
                opened.openSession(startTimeout());
            } catch (HttpMcpException e) {
                opened.close();
                if (e.kind() != Kind.PROTOCOL && e.kind() != Kind.RPC_ERROR) {
                    // not a refusal (unreachable, a timeout): a later call tries again
                    return current;
                }
                LOG.log(Level.INFO, "server " + settings.name() + " keeps no session of the " + StreamableHttpClient.LEGACY
                        + " era (" + e.getMessage() + "); its requests reach the agents of that era as input_required"
                        + " rounds answered for them");
                synchronized (this) {
                    eraSessionRefused = true;
                }
                return current;
            }
            synchronized (this) {
                if (closed) {
                    opened.close();
                    return current;
                }
                eraSession = opened;
            }
            return opened;
        }
    }

    @Override
    synchronized boolean leftOut(String own) {
        return leftOut.contains(own);
    }

    private synchronized Map<String, McpHeaders.Declarations> toolHeaders() {
        return toolHeaders;
    }

    /** Whether {@code ended} was the session of the initialize era; it is closed, and the next call opens another. */
    private boolean dropEraSession(StreamableHttpClient ended) {
        synchronized (this) {
            if (ended != eraSession) {
                return false;
            }
            eraSession = null;
        }
        ended.close();
        return true;
    }

    private synchronized StreamableHttpClient connected() {
        return connection;
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
        boolean tell;
        synchronized (this) {
            tell = isNews(why.getMessage());
        }
        LOG.log(tell ? Level.WARNING : Level.DEBUG, why.getMessage() + "; reaching it again in "
                + seconds(delay));
        scheduleConnect(delay);
    }

    private void notified(JsonNode notification) {
        String method = notification.path("method").asText();
        if ("notifications/tools/list_changed".equals(method)) {
            schedule(this::refreshQuietly, Duration.ZERO);
            notifications.toolsChanged();
            return;
        }
        JsonNode params = notification.get("params");
        notifications.take(method, params != null && params.isObject() ? McpJson.JSON.convertValue(params, OBJECT) : null);
    }

    @Override
    Set<String> features(StreamableHttpClient current) {
        JsonNode declared = current.capabilities();
        if (declared == null) {
            return Set.of();
        }
        Set<String> features = features(declared.has("resources"), declared.has("prompts"), declared.has("completions"));
        // a task is asked on execache's own connection: a server reached as each caller's person takes plain calls
        String tasks = settings.perPerson() ? null : tasksFeature(McpJson.JSON.convertValue(declared, Map.class), current.modern());
        if (tasks != null) {
            features.add(tasks);
        }
        return features;
    }

    /** A request other than a tool call, sent as the agent sent it and answered as the server answered it. */
    @Override
    String ask(String method, String params) {
        return ask(method, params, null);
    }

    /**
     * As {@link #ask(String, String)}; what the server asks while it answers goes to {@code agent}: on the request's
     * stream in the 2025 era; in the 2026-07-28 era each request of an {@code input_required} round, one at a time
     * (the agent is of the initialize era), after which the request is sent again with the answers under the server's
     * keys and its {@code requestState}, until the server answers. The 2026-07-28 connection is kept (not a session
     * of the agent's era, as for a call): the answer then carries that era's cache hints ({@code ttlMs}). An agent that
     * takes rounds is not asked here: the server's {@code input_required} answer comes back as it is, for that agent
     * to answer.
     */
    @Override
    String ask(String method, String params, ToolCatalog.Agent agent) {
        if (!ASKABLE.contains(method) && !TASK_METHODS.contains(method)) {
            throw cannotAsk(settings.name(), method);
        }
        reconnectIfSignInChanged();
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
            given = McpJson.JSON.readValue(params, ObjectNode.class);
        } catch (JsonProcessingException e) {
            throw new ServerRefusedException(McpSchema.ErrorCodes.INVALID_PARAMS, "the request to server "
                    + settings.name() + " is not what " + method + " takes: " + e.getOriginalMessage());
        }
        if (TASK_METHODS.contains(method) && current.modern()) {
            // the extension is negotiated per request: execache's own capabilities, with it
            ObjectNode meta = given.has("_meta") && given.get("_meta").isObject() ? (ObjectNode) given.get("_meta")
                    : given.putObject("_meta");
            ObjectNode capabilities = McpJson.JSON.valueToTree(ServerProcessTransport.CLIENT_CAPABILITIES);
            capabilities.putObject("extensions").putObject(TASKS_EXTENSION);
            meta.set(StreamableHttpClient.CLIENT_CAPABILITIES_META, capabilities);
        }
        boolean subscribing = McpSchema.METHOD_RESOURCES_SUBSCRIBE.equals(method);
        if (current.modern() && (subscribing || McpSchema.METHOD_RESOURCES_UNSUBSCRIBE.equals(method))) {
            // the 2026-07-28 revision removed these requests: the subscription travels on subscriptions/listen
            current.subscribe(given.path("uri").asText(), subscribing);
            return "{}";
        }
        ToolCatalog.Agent asked = agent == null || agent.asksRounds() ? null : agent;
        if (asked != null) {
            callers.addLast(asked);
        }
        try {
            return answered(askOnce(current, method, given, asked));
        } catch (HttpMcpException e) {
            if (e.kind() == Kind.CANCELLED) {
                throw askingCancelled(settings.name(), method);
            }
            if (e.kind() == Kind.SESSION_EXPIRED) {
                StreamableHttpClient again = reopen(current);
                if (again != null) {
                    try {
                        return answered(askOnce(again, method, given, asked));
                    } catch (HttpMcpException second) {
                        throw refused(method, second);
                    }
                }
            }
            throw refused(method, e);
        } catch (AgentRefusedException e) {
            if (Thread.interrupted()) {
                throw askingCancelled(settings.name(), method);
            }
            throw new ServerRefusedException(McpSchema.ErrorCodes.INTERNAL_ERROR, "asking server " + settings.name()
                    + " " + method + " failed: the server asked the agent something and got no answer: "
                    + e.getMessage());
        } finally {
            if (asked != null) {
                callers.removeLastOccurrence(asked);
            }
        }
    }

    private JsonNode askOnce(StreamableHttpClient current, String method, ObjectNode params, ToolCatalog.Agent agent) {
        return agent == null ? current.request(method, params, callTimeout)
                : withRounds(current, method, params, agent, System.nanoTime() + callTimeout.toNanos());
    }

    private String answered(JsonNode result) {
        ObjectNode copy = result.deepCopy();
        String type = copy.path("resultType").textValue();
        if (!"input_required".equals(type) && !"task".equals(type)) {
            // an input_required answer keeps it: the gateway passes it on, and never stores it; a task's, which tells
            // a task from a result (the tasks extension)
            copy.remove("resultType");
        }
        try {
            return McpJson.JSON.writeValueAsString(copy);
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
        ObjectNode params = McpJson.JSON.createObjectNode();
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
        Set<String> notOffered = new TreeSet<>();
        String cursor = null;
        long ttl = -1;
        do {
            ObjectNode params = McpJson.JSON.createObjectNode();
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
                    notOffered.add(tool.path("name").asText());
                    continue;
                }
                if (!declared.headers().isEmpty()) {
                    headers.put(tool.path("name").asText(), declared);
                }
                listed.add(catalogTool(McpJson.JSON.convertValue(tool, McpSchema.Tool.class), serverInfo,
                        McpJson.JSON.convertValue(tool, OBJECT)));
            }
            Duration pageTtl = ResultTtl.read(page.path("ttlMs").numberValue(), null).ttl();
            if (pageTtl != null) {
                ttl = ttl < 0 ? pageTtl.toMillis() : Math.min(ttl, pageTtl.toMillis());
            }
            cursor = page.path("nextCursor").isTextual() ? page.get("nextCursor").asText() : null;
        } while (cursor != null && !cursor.isEmpty());
        current.toolHeaders(headers);
        StreamableHttpClient session;
        synchronized (this) {
            toolHeaders = Map.copyOf(headers);
            leftOut = Set.copyOf(notOffered);
            session = eraSession;
        }
        if (session != null) {
            session.toolHeaders(headers);
        }
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

    /** Whether {@code reason} is news (said at WARNING): not the failure said last since the server was up. */
    private boolean isNews(String reason) {
        boolean news = !reason.equals(toldFailure);
        toldFailure = reason;
        return news;
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
        StreamableHttpClient session;
        synchronized (this) {
            current = markClosed();
            if (relist != null) {
                relist.cancel(false);
            }
            session = eraSession;
            eraSession = null;
        }
        if (current != null) {
            current.close();
        }
        if (session != null) {
            session.close();
        }
    }
}
