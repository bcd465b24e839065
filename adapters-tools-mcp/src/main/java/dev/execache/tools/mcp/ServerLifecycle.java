package dev.execache.tools.mcp;

import com.fasterxml.jackson.core.type.TypeReference;
import dev.execache.core.CanonicalJson;
import dev.execache.core.ToolResult;
import dev.execache.core.spi.CatalogTool;
import dev.execache.core.spi.ToolCatalog;
import io.modelcontextprotocol.spec.McpSchema;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * One server's life, however it is reached: its connection up or not, the tools it offered when it was last asked and
 * listing them again, the backoff between attempts to reach it, waiting for a start, its status, and what the agent
 * asked of it (log level, roots, the session's agent) asked again when it comes back. A command server and a url
 * server differ only in how a connection ({@code C}) is made, listed, asked and ended, which each says here.
 *
 * <p>State is guarded by the server's own monitor, which the subclass shares for its own fields.
 */
abstract class ServerLifecycle<C> extends Downstream {
    static final System.Logger LOG = System.getLogger("dev.execache.tools.mcp");
    static final String SEPARATOR = "__";
    static final TypeReference<Map<String, Object>> OBJECT = new TypeReference<>() {
    };
    private static final Duration FIRST_BACKOFF = Duration.ofSeconds(1);
    private static final Duration MAX_BACKOFF = Duration.ofSeconds(30);
    /**
     * How long starting a server may take: longer than one call may, since a loaded machine can
     * take seconds to start node or npx, and a start that gives up too early restarts a healthy server.
     */
    private static final Duration MIN_START_TIMEOUT = Duration.ofSeconds(30);
    private static final AtomicLong PROGRESS_TOKENS = new AtomicLong();

    private final DownstreamSettings settings;
    final Duration callTimeout;
    final ScheduledExecutorService scheduler;
    final Runnable toolsMayHaveChanged;
    final Clock clock;

    /** The connection while the server is up; null while it starts, is reached again, or is closed. */
    C connection;
    List<CatalogTool> tools = List.of();
    boolean closed;
    int failures;
    /** The level the agent asked the server to log from, asked again when it connects again; null until asked. */
    volatile McpSchema.LoggingLevel logLevel;
    /** The agent asked for what the server asks outside any call; null when there is none. */
    volatile ToolCatalog.Agent sessionAgent;

    ServerLifecycle(DownstreamSettings settings, Duration callTimeout, ScheduledExecutorService scheduler,
            Runnable toolsMayHaveChanged, Clock clock) {
        this.settings = settings;
        this.callTimeout = callTimeout;
        this.scheduler = scheduler;
        this.toolsMayHaveChanged = toolsMayHaveChanged;
        this.clock = clock;
    }

    /** The tools the server offers now, each with its digest. */
    abstract List<CatalogTool> list(C current);

    /** Asks the server to log from {@code level} up, if it declared that it logs. */
    abstract void askLogLevel(C current, McpSchema.LoggingLevel level);

    abstract void rootsChanged(C current);

    abstract String instructions(C current);

    abstract Set<String> features(C current);

    /** Holding the lock, while the server is not up: why it is unavailable, or null while it is still starting. */
    abstract String whyDown();

    /** Holding the lock, while the server is not up: whether a start is under way or may still come. */
    abstract boolean starting();

    /** Why {@link #refreshQuietly} could not list the tools, as the log says it. */
    abstract String listingFailed(RuntimeException e);

    @Override
    final String name() {
        return settings.name();
    }

    @Override
    final synchronized List<CatalogTool> tools() {
        return tools;
    }

    @Override
    final synchronized boolean unlisted(String own) {
        return connection != null && !closed && !leftOut(own)
                && tools.stream().noneMatch(tool -> tool.serverToolName().equals(own));
    }

    /** Whether the server's last list named {@code own} and the catalog left it out. */
    boolean leftOut(String own) {
        return false;
    }

    /** Lists the tools again with {@link #list}; a subclass may see a failure first. */
    List<CatalogTool> listAgain(C current) {
        return list(current);
    }

    @Override
    final void refresh() {
        C current;
        synchronized (this) {
            current = connection;
        }
        if (current == null) {
            return;
        }
        List<CatalogTool> listed = listAgain(current);
        boolean changed;
        synchronized (this) {
            if (connection != current) {
                return;
            }
            changed = !listed.equals(tools);
            tools = listed;
        }
        if (changed) {
            toolsMayHaveChanged.run();
        }
    }

    @Override
    final void refreshQuietly() {
        try {
            refresh();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, listingFailed(e));
        }
    }

    /** Says the server is up and tells the catalog its tools may have changed. */
    final void announce(String described, int toolCount) {
        LOG.log(Level.INFO, "server " + name() + ": connected (" + described + "), " + toolCount
                + (toolCount == 1 ? " tool" : " tools"));
        toolsMayHaveChanged.run();
    }

    /** On a new connection: the level the agent asked for, asked again. */
    final void askLogLevelAgain(C opened) {
        McpSchema.LoggingLevel level = logLevel;
        if (level != null) {
            askLogLevel(opened, level);
        }
    }

    @Override
    final void setLogLevel(McpSchema.LoggingLevel level) {
        logLevel = level;
        C current = current();
        if (current != null) {
            askLogLevel(current, level);
        }
    }

    @Override
    final void rootsChanged() {
        C current = current();
        if (current != null) {
            rootsChanged(current);
        }
    }

    @Override
    final void setSessionAgent(ToolCatalog.Agent agent) {
        sessionAgent = agent;
    }

    @Override
    final synchronized String instructions() {
        return connection == null ? introduction() : instructions(connection);
    }

    /** Holding the lock: what a server still starting said of itself in {@code initialize}; null when it said nothing yet. */
    String introduction() {
        return null;
    }

    @Override
    final Set<String> features() {
        C current = current();
        return current == null ? Set.of() : features(current);
    }

    final synchronized C current() {
        return connection;
    }

    @Override
    final synchronized ToolCatalog.ServerStatus status() {
        if (connection != null) {
            return new ToolCatalog.ServerStatus(name(), ToolCatalog.ServerStatus.State.UP, null, tools.size());
        }
        String why = whyDown();
        return why != null ? new ToolCatalog.ServerStatus(name(), ToolCatalog.ServerStatus.State.UNAVAILABLE, why, 0)
                : new ToolCatalog.ServerStatus(name(), ToolCatalog.ServerStatus.State.STARTING, null, 0);
    }

    @Override
    void awaitStart() throws InterruptedException {
        awaitConnection(startTimeout(), this::starting);
    }

    /**
     * Waits, at most {@code bound}, while the server is not up, not closed and {@code worthWaiting} (asked holding the
     * lock); returns the connection, null when it is not up.
     */
    final synchronized C awaitConnection(Duration bound, BooleanSupplier worthWaiting) throws InterruptedException {
        long deadline = System.nanoTime() + bound.toNanos();
        while (connection == null && !closed && worthWaiting.getAsBoolean()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
        return connection;
    }

    /** Holding the lock: forgets {@code gone} if it is still the connection of a server not closed; returns whether it was. */
    final boolean drop(C gone) {
        if (gone == null || connection != gone || closed) {
            return false;
        }
        connection = null;
        return true;
    }

    /** Marks the server closed, wakes whoever waits for it and returns the connection to end (null: none). */
    final synchronized C markClosed() {
        closed = true;
        C current = connection;
        connection = null;
        notifyAll();
        return current;
    }

    /** A delay as a person reads it: {@code 1 s}, {@code 1.5 s}. */
    static String seconds(Duration delay) {
        return delay.toMillis() % 1000 == 0 ? delay.toSeconds() + " s" : delay.toMillis() / 1000.0 + " s";
    }

    /** Doubling from 1 s to 30 s with each failure. */
    final synchronized Duration nextBackoff() {
        long millis = FIRST_BACKOFF.toMillis() << Math.min(failures, 5);
        failures++;
        return Duration.ofMillis(Math.min(millis, MAX_BACKOFF.toMillis()));
    }

    final void scheduleConnect(Duration delay) {
        schedule(this::connect, delay);
    }

    /** Runs {@code task} after {@code delay} unless the server is closed; null when it will not run. */
    final ScheduledFuture<?> schedule(Runnable task, Duration delay) {
        synchronized (this) {
            if (closed) {
                return null;
            }
        }
        try {
            return scheduler.schedule(task, delay.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            return null; // the catalog is closing
        }
    }

    final Duration startTimeout() {
        return callTimeout.compareTo(MIN_START_TIMEOUT) > 0 ? callTimeout : MIN_START_TIMEOUT;
    }

    @Override
    final ToolResult call(String tool, Map<String, Object> args) {
        return call(tool, args, (Consumer<Map<String, Object>>) null);
    }

    /** As {@link #call(String, Map)}; with {@code progress}, the call carries a progress token of its own. */
    @Override
    final ToolResult call(String tool, Map<String, Object> args, Consumer<Map<String, Object>> progress) {
        return call(tool, args, progress, null);
    }

    /** A progress token of execache's own for one call to {@code server}, unique in this process. */
    static String progressToken(String server) {
        return "execache-" + server + "-" + PROGRESS_TOKENS.incrementAndGet();
    }

    /**
     * A listed tool as the catalog holds it.
     *
     * @param asListed the tool as the server wrote it, for the fields the SDK's tool type does not know; null for none
     */
    final CatalogTool catalogTool(McpSchema.Tool tool, McpSchema.Implementation info, Map<String, Object> asListed) {
        Map<String, Object> definition = McpJson.JSON.convertValue(tool, OBJECT);
        if (asListed != null) {
            // the fields the SDK's tool type does not know (execution, say), as the server wrote them
            asListed.forEach(definition::putIfAbsent);
        }
        Boolean readOnly = tool.annotations() == null ? null : tool.annotations().readOnlyHint();
        return new CatalogTool(name() + SEPARATOR + tool.name(), name(), digest(name(), info, definition, identity()),
                definition, readOnly, settings.trustAnnotations());
    }

    static String digest(String server, McpSchema.Implementation info, Map<String, Object> definition) {
        return digest(server, info, definition, null);
    }

    /**
     * The version of a tool: a digest of what defines it, in canonical JSON so that the order of
     * keys the server happens to send does not matter, and of how its server is reached (its
     * identity), so that answers of differently configured servers are never taken for each other.
     */
    static String digest(String server, McpSchema.Implementation info, Map<String, Object> definition, String identity) {
        Map<String, Object> defining = new TreeMap<>();
        defining.put("server", server);
        if (identity != null) {
            defining.put("identity", identity);
        }
        Map<String, Object> serverInfo = new LinkedHashMap<>();
        serverInfo.put("name", info == null ? null : info.name());
        serverInfo.put("version", info == null ? null : info.version());
        defining.put("serverInfo", serverInfo);
        for (String part : List.of("name", "description", "inputSchema", "outputSchema", "annotations")) {
            defining.put(part, definition.get(part));
        }
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256")
                    .digest(CanonicalJson.write(defining, server + SEPARATOR + definition.get("name"))
                            .getBytes(StandardCharsets.UTF_8));
            return "mcp:" + HexFormat.of().formatHex(hash, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform must provide SHA-256", e);
        }
    }

    /** A tool call's error answer, as a server's own error answer is written. */
    static ToolResult failure(String message) {
        Map<String, Object> text = new LinkedHashMap<>();
        text.put("type", "text");
        text.put("text", message);
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("content", List.of(text));
        result.put("isError", true);
        return ToolResult.error(CanonicalJson.write(result, "error"));
    }

    static String describe(McpSchema.Implementation info) {
        return info == null ? "no server info" : info.name() + " " + info.version();
    }
}
