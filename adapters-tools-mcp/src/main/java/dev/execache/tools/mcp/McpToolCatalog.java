package dev.execache.tools.mcp;

import dev.execache.core.ToolResult;
import dev.execache.core.spi.CatalogTool;
import dev.execache.core.spi.Telemetry;
import dev.execache.core.spi.ToolCatalog;
import java.lang.System.Logger.Level;
import java.net.http.HttpClient;
import java.time.Clock;
import java.time.Duration;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * The tools of the downstream MCP servers, offered as {@code SERVER__TOOL}. The servers start in
 * the background and their tools join as each comes up; {@link #servers} says which are still
 * starting and why one is unavailable. A command server is
 * started with the MCP Java SDK client over stdio and restarted with backoff when it dies; a url
 * server is reached over Streamable HTTP and reached again with backoff when it cannot be. Each is
 * asked for its tools at start, on its {@code notifications/tools/list_changed}, after a restart
 * and every {@code rediscoverEvery} (a url server of the 2026-07-28 era also when its list's
 * {@code ttlMs} lapses).
 */
public final class McpToolCatalog implements ToolCatalog {
    private static final System.Logger LOG = System.getLogger("dev.execache.tools.mcp");

    private final Map<String, Downstream> servers = new LinkedHashMap<>();
    private volatile Telemetry telemetry = Telemetry.NONE;
    private final ScheduledExecutorService scheduler;
    private final CopyOnWriteArrayList<Listener> listeners = new CopyOnWriteArrayList<>();
    /** How long a server's start may take at least (a loaded machine can take seconds to start node or npx). */
    private static final Duration MIN_START_WAIT = Duration.ofSeconds(30);

    private final CopyOnWriteArrayList<LogListener> logListeners = new CopyOnWriteArrayList<>();
    private final CopyOnWriteArrayList<NotificationListener> notificationListeners = new CopyOnWriteArrayList<>();
    private final Duration startWait;
    private List<CatalogTool> lastTold = List.of();
    /** Every server's first start, once {@link #start} was called; guarded by this. */
    private CompletableFuture<Void> firstStarts;

    /** Identities digested without a key (SHA-256). */
    public McpToolCatalog(List<? extends DownstreamSettings> settings, Duration callTimeout, Duration rediscoverEvery,
            Consumer<String> stderr, Clock clock) {
        this(settings, null, callTimeout, rediscoverEvery, stderr, clock);
    }

    /** The servers whose answers are each calling person's own (reached as them, not shared publicly). */
    private final java.util.Set<String> perPerson;

    /**
     * @param identityKey keys the servers' identities (see {@link DownstreamSettings#identity}): a
     *     key derived from the fleet key, so that a fleet shares and no one without it can test a
     *     guessed credential against a stored digest; null for none
     * @param callTimeout how long a call (or a server's start) may take before it is a tool error
     * @param rediscoverEvery how often every server is asked for its tools again
     * @param stderr gets the downstream servers' stderr lines, each prefixed with its server's name
     */
    public McpToolCatalog(List<? extends DownstreamSettings> settings, byte[] identityKey, Duration callTimeout,
            Duration rediscoverEvery, Consumer<String> stderr, Clock clock) {
        this(settings, identityKey, callTimeout, rediscoverEvery, stderr, clock, null);
    }

    /**
     * As above, with a person's sign-ins: a url server that asks for credentials and has none of its
     * own in its entry is reached with the person's sign-in kept in {@code signIns} (null: none).
     */
    public McpToolCatalog(List<? extends DownstreamSettings> settings, byte[] identityKey, Duration callTimeout,
            Duration rediscoverEvery, Consumer<String> stderr, Clock clock, SignIns signIns) {
        Objects.requireNonNull(settings, "settings must not be null");
        requirePositive(callTimeout, "callTimeout");
        requirePositive(rediscoverEvery, "rediscoverEvery");
        this.startWait = callTimeout;
        // a thread for each server's start, which may wait for it as long as its start timeout, and two for the rest
        this.scheduler = Executors.newScheduledThreadPool(settings.size() + 2, runnable -> {
            Thread thread = new Thread(runnable, "execache-mcp-catalog");
            thread.setDaemon(true);
            return thread;
        });
        HttpClient http = null;
        java.util.Set<String> asPerson = new java.util.TreeSet<>();
        for (DownstreamSettings server : settings) {
            if (server instanceof UrlServerSettings url && url.perPerson() && !url.sharePublic()) {
                asPerson.add(url.name());
            }
            Runnable toolsMayHaveChanged = () -> scheduler.execute(this::tellIfChanged);
            Downstream downstream;
            if (server instanceof UrlServerSettings url) {
                http = http != null ? http : HttpClient.newBuilder().connectTimeout(callTimeout)
                        .version(HttpClient.Version.HTTP_1_1).build();
                downstream = new UrlServer(url, identityKey, callTimeout, scheduler, http, toolsMayHaveChanged,
                        new ServerNotifications(message -> tellLogged(server.name(), message),
                                (method, params) -> tellNotified(server.name(), method, params)), clock, signIns);
            } else {
                downstream = new DownstreamServer((McpServerSettings) server, identityKey, callTimeout, scheduler, stderr,
                        toolsMayHaveChanged, message -> tellLogged(server.name(), message),
                        (method, params) -> tellNotified(server.name(), method, params), clock);
            }
            if (servers.put(server.name(), downstream) != null) {
                throw new IllegalArgumentException("server '" + server.name() + "' is configured twice");
            }
        }
        this.perPerson = java.util.Set.copyOf(asPerson);
        scheduler.scheduleWithFixedDelay(this::refreshQuietly, rediscoverEvery.toMillis(), rediscoverEvery.toMillis(),
                TimeUnit.MILLISECONDS);
    }

    /** Starts every server at once and waits (at most the call timeout) for each to connect or fail once. */
    public McpToolCatalog start() {
        startInBackground();
        try {
            if (!awaitStarted(startWait.plusSeconds(1))) {
                LOG.log(Level.WARNING, "not every MCP server started in time; the others come up in the background");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return this;
    }

    /**
     * Starts every server at once, in the background, and returns: their tools join the catalog
     * (and its listeners hear of them) as each server comes up, so that {@code serve} answers its
     * client at once whatever the servers do. {@link #awaitStarted} waits for them.
     */
    public McpToolCatalog startInBackground() {
        synchronized (this) {
            if (firstStarts != null) {
                return this;
            }
            List<CompletableFuture<Boolean>> starting = new ArrayList<>();
            for (Downstream server : servers.values()) {
                starting.add(CompletableFuture.supplyAsync(server::connect, scheduler));
            }
            firstStarts = CompletableFuture.allOf(starting.toArray(CompletableFuture[]::new));
        }
        return this;
    }

    /**
     * Waits until every server has come up or failed its first start, at most {@code bound}:
     * for a command that needs them all before it answers ({@code execache tools}, {@code run}).
     * Returns whether every server's first start ended within it.
     */
    public boolean awaitStarted(Duration bound) throws InterruptedException {
        CompletableFuture<Void> all;
        synchronized (this) {
            all = firstStarts;
        }
        if (all == null) {
            throw new IllegalStateException("the catalog was not started");
        }
        try {
            all.get(bound.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        } catch (ExecutionException e) {
            return true;
        } catch (TimeoutException e) {
            return false;
        }
    }

    /** How long a command that waits for every server waits at most: a start may take this long. */
    public Duration startTimeout() {
        return startWait.compareTo(MIN_START_WAIT) > 0 ? startWait : MIN_START_WAIT;
    }

    @Override
    public List<ServerStatus> servers() {
        return servers.values().stream().map(Downstream::status).toList();
    }

    @Override
    public void awaitStart(String server) throws InterruptedException {
        Downstream downstream = servers.get(server);
        if (downstream != null) {
            downstream.awaitStart();
        }
    }

    @Override
    public void awaitIntroduction(String server) throws InterruptedException {
        Downstream downstream = servers.get(server);
        if (downstream != null) {
            downstream.awaitIntroduction();
        }
    }

    @Override
    public boolean signIn(String server, ToolCatalog.Agent agent) throws InterruptedException {
        return servers.get(server) instanceof UrlServer url && url.signInThroughAgent(agent);
    }

    @Override
    public List<CatalogTool> tools() {
        List<CatalogTool> all = new ArrayList<>();
        servers.values().forEach(server -> all.addAll(server.tools()));
        return List.copyOf(all);
    }

    @Override
    public ToolResult call(String tool, Map<String, Object> args) {
        return call(tool, args, null);
    }

    @Override
    public ToolResult call(String tool, Map<String, Object> args, Consumer<Map<String, Object>> progress) {
        return call(tool, args, progress, null);
    }

    @Override
    public ToolResult call(String tool, Map<String, Object> args, Consumer<Map<String, Object>> progress, Agent agent) {
        return call(tool, args, progress, agent, null);
    }

    @Override
    public java.util.Set<String> perPerson() {
        return perPerson;
    }

    @Override
    public ToolResult call(String tool, Map<String, Object> args, Consumer<Map<String, Object>> progress, Agent agent,
            Person person) {
        int separator = tool.indexOf(ServerLifecycle.SEPARATOR);
        Downstream server = separator < 0 ? null : servers.get(tool.substring(0, separator));
        if (server == null) {
            return ServerLifecycle.failure("unknown tool '" + tool + "': no configured server offers it");
        }
        String own = tool.substring(separator + ServerLifecycle.SEPARATOR.length());
        // the span is current while the server's request is made: its context goes with the request
        try (Telemetry.Span span = telemetry.start("tools/call " + own, Telemetry.Kind.CLIENT, Map.of())) {
            span.set("mcp.method.name", "tools/call").set("gen_ai.operation.name", "execute_tool")
                    .set("gen_ai.tool.name", own).set("execache.server", server.name())
                    .set("network.transport", server.transport());
            ToolResult result = server instanceof UrlServer url
                    ? url.call(own, args, progress, agent == null ? null : ElicitationDefaults.applying(agent), person)
                    : agent != null ? server.call(own, args, progress, ElicitationDefaults.applying(agent))
                    : progress == null ? server.call(own, args) : server.call(own, args, progress);
            if (result.isError()) {
                span.failed("tool_error", null);
            }
            return result;
        }
    }

    /**
     * Where each call's span is reported; the span's trace context goes to the server in the
     * request's {@code _meta} (and in the HTTP headers of a url server). Nothing by default.
     */
    public McpToolCatalog useTelemetry(Telemetry reportTo) {
        this.telemetry = Objects.requireNonNull(reportTo, "telemetry must not be null");
        servers.values().forEach(server -> server.telemetry = reportTo);
        return this;
    }

    @Override
    public void setSessionAgent(Agent agent) {
        ToolCatalog.Agent completing = ElicitationDefaults.applying(agent);
        servers.values().forEach(server -> server.setSessionAgent(completing));
    }

    @Override
    public void rootsChanged() {
        servers.values().forEach(Downstream::rootsChanged);
    }

    /** Each server's identity, a one-way digest of how it is reached; servers shared publicly have none. */
    @Override
    public Map<String, String> identities() {
        Map<String, String> identities = new TreeMap<>();
        servers.forEach((name, server) -> {
            if (server.identity() != null) {
                identities.put(name, server.identity());
            }
        });
        return Map.copyOf(identities);
    }

    @Override
    public void addListener(Listener listener) {
        listeners.add(Objects.requireNonNull(listener, "listener must not be null"));
    }

    @Override
    public Map<String, String> instructions() {
        Map<String, String> said = new LinkedHashMap<>();
        servers.forEach((name, server) -> {
            String instructions = server.instructions();
            if (instructions != null && !instructions.isBlank()) {
                said.put(name, instructions);
            }
        });
        return said;
    }

    @Override
    public Map<String, java.util.Set<String>> features() {
        Map<String, java.util.Set<String>> features = new LinkedHashMap<>();
        servers.forEach((name, server) -> {
            java.util.Set<String> offered = server.features();
            if (!offered.isEmpty()) {
                features.put(name, offered);
            }
        });
        return features;
    }

    @Override
    public String ask(String server, String method, String params) {
        return ask(server, method, params, null);
    }

    @Override
    public String ask(String server, String method, String params, Agent agent) {
        Downstream downstream = servers.get(server);
        if (downstream == null) {
            throw new dev.execache.core.spi.ServerRefusedException(McpSchema.ErrorCodes.INVALID_PARAMS,
                    "no server named " + server + " is configured");
        }
        return agent == null ? downstream.ask(method, params)
                : downstream.ask(method, params, ElicitationDefaults.applying(agent));
    }

    @Override
    public boolean unlisted(String tool) {
        int separator = tool.indexOf(ServerLifecycle.SEPARATOR);
        Downstream server = separator < 0 ? null : servers.get(tool.substring(0, separator));
        return server != null && server.unlisted(tool.substring(separator + ServerLifecycle.SEPARATOR.length()));
    }

    @Override
    public void setLogLevel(String level) {
        McpSchema.LoggingLevel wanted = Arrays.stream(McpSchema.LoggingLevel.values())
                .filter(each -> each.name().toLowerCase(Locale.ROOT).equals(level)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("not a log level: " + level + " (one of debug, info, "
                        + "notice, warning, error, critical, alert, emergency)"));
        // asked on the catalog's threads: a server that is slow to answer must not hold up the agent's request
        servers.values().forEach(server -> scheduler.execute(() -> server.setLogLevel(wanted)));
    }

    @Override
    public void addLogListener(LogListener listener) {
        logListeners.add(Objects.requireNonNull(listener, "listener must not be null"));
    }

    @Override
    public void addNotificationListener(NotificationListener listener) {
        notificationListeners.add(Objects.requireNonNull(listener, "listener must not be null"));
    }

    private void tellNotified(String server, String method, Map<String, Object> params) {
        for (NotificationListener listener : notificationListeners) {
            try {
                listener.notified(server, method, params);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "a listener of the servers' notifications failed: " + e);
            }
        }
    }

    private void tellLogged(String server, Map<String, Object> message) {
        for (LogListener listener : logListeners) {
            try {
                listener.logged(server, message);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "a listener of log messages failed: " + e);
            }
        }
    }

    /** Asks every running server for its tools now, as the periodic re-discovery does. */
    public void refresh() {
        servers.values().forEach(Downstream::refresh);
        tellIfChanged();
    }

    /** The process id of a running server, -1 when it is not running. */
    public long pid(String server) {
        Downstream downstream = servers.get(server);
        return downstream == null ? -1 : downstream.pid();
    }

    private void refreshQuietly() {
        servers.values().forEach(Downstream::rediscover);
    }

    private synchronized void tellIfChanged() {
        List<CatalogTool> now = tools();
        if (now.equals(lastTold)) {
            return;
        }
        lastTold = now;
        for (Listener listener : listeners) {
            try {
                listener.toolsChanged(now);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "a listener of tool changes failed: " + e);
            }
        }
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
        servers.values().parallelStream().forEach(Downstream::close);
    }

    private static void requirePositive(Duration duration, String name) {
        Objects.requireNonNull(duration, name + " must not be null");
        if (duration.isZero() || duration.isNegative()) {
            throw new IllegalArgumentException(name + " must be positive: " + duration);
        }
    }
}
