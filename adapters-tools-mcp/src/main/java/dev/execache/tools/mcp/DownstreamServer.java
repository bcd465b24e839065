package dev.execache.tools.mcp;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.execache.core.ToolResult;
import dev.execache.core.spi.CatalogTool;
import dev.execache.core.spi.ToolCallCancelledException;
import dev.execache.core.spi.ToolCatalog;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpError;
import dev.execache.core.spi.ServerRefusedException;
import java.util.Set;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.schema.JsonSchemaValidator;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.ListToolsResult;
import java.lang.System.Logger.Level;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * One downstream server: its process and client, restarted with backoff when it dies, and the
 * tools it offered when it was last asked.
 */
final class DownstreamServer extends ServerLifecycle<DownstreamServer.Connection> {
    /**
     * The SDK's own check of a tool's structured output against its output schema, the one its client builds by
     * default, built at the first check: building it loads a JSON Schema library (two hundred classes) before a
     * server is up, which serve's first answer waits for.
     */
    private static final JsonSchemaValidator OUTPUT_VALIDATOR = new JsonSchemaValidator() {
        @Override
        public ValidationResponse validate(Map<String, Object> schema, Object structuredContent) {
            return SdkValidator.DEFAULT.validate(schema, structuredContent);
        }

        @Override
        public ValidationResponse validateSchema(Map<String, Object> schema) {
            return SdkValidator.DEFAULT.validateSchema(schema);
        }
    };

    private static final class SdkValidator {
        static final JsonSchemaValidator DEFAULT = McpJsonDefaults.getSchemaValidator();
    }

    /** A server that stayed up this long starts again from the first backoff when it dies. */
    private static final Duration STABLE = Duration.ofSeconds(30);
    /** Calls wait here, so a call gives up after the call timeout while the client's own timeout is the longer start timeout. */
    private static final ExecutorService CALLS = Executors.newCachedThreadPool(runnable -> {
        Thread thread = new Thread(runnable, "execache-mcp-call");
        thread.setDaemon(true);
        return thread;
    });
    private static final String NO_ANSWER = "no answer in time";
    /** How long a request a server made during a call may wait for the agent once the call has ended. */
    private static final Duration ASKED_AFTER_CALL = Duration.ofSeconds(60);

    private final McpServerSettings settings;
    private final byte[] identityKey;
    /**
     * How the server is reached (see {@link McpServerSettings#identity}), worked out when first asked: the digest's
     * security providers take milliseconds of serve's start that the server's own start should have.
     */
    private volatile String identity;
    private volatile boolean identityKnown;
    private final Consumer<String> stderr;
    private final Consumer<Map<String, Object>> logged;
    private final java.util.function.BiConsumer<String, Map<String, Object>> notified;

    private Instant connectedAt;
    /** A start in progress: its transport and (once made) its client, so that close() ends it too. */
    private ServerProcessTransport startingTransport;
    private McpSyncClient startingClient;
    /** The starting server's answer to initialize, before its tools are listed; null before it answered. */
    private McpSchema.InitializeResult introduced;
    /** The exit code of the process being started, when it ended before it answered; null otherwise. */
    private Integer startExit;
    /** Why the last start failed, in one line; null while it is up or until a start failed. */
    private String failure;
    /** The failure last said at WARNING: the same one again, on each retry, is said only at DEBUG. */
    private String toldFailure;
    /**
     * The calls in flight, oldest first: a request of the server's to the agent goes to the agent of the latest (stdio
     * does not say which call a server's request belongs to).
     */
    private final java.util.concurrent.ConcurrentLinkedDeque<Caller> callers = new java.util.concurrent.ConcurrentLinkedDeque<>();

    /**
     * @param logs whether the server declared that it logs (the logging capability)
     * @param instructions what it said of itself in initialize, null for nothing
     */
    record Connection(McpSyncClient client, ServerProcessTransport transport, McpSchema.Implementation info,
            boolean logs, String instructions, McpSchema.ServerCapabilities capabilities) {
    }

    DownstreamServer(McpServerSettings settings, byte[] identityKey, Duration callTimeout,
            ScheduledExecutorService scheduler, Consumer<String> stderr, Runnable toolsMayHaveChanged,
            Consumer<Map<String, Object>> logged, java.util.function.BiConsumer<String, Map<String, Object>> notified,
            Clock clock) {
        super(settings, callTimeout, scheduler, toolsMayHaveChanged, clock);
        this.notified = notified;
        this.settings = settings;
        this.identityKey = identityKey;
        this.stderr = stderr;
        this.logged = logged;
    }

    @Override
    String identity() {
        if (!identityKnown) {
            // the same digest whichever thread works it out first: no lock to wait for
            identity = settings.identity(identityKey);
            identityKnown = true;
        }
        return identity;
    }

    /** Starts the server and lists its tools; on failure, tries again later with backoff. Returns whether it is up. */
    @Override
    boolean connect() {
        ServerProcessTransport transport;
        StartStderr startStderr;
        synchronized (this) {
            if (closed || connection != null || startingTransport != null) {
                return connection != null;
            }
            startStderr = new StartStderr(toldFailure != null);
            transport = new ServerProcessTransport(settings, startStderr, this::exited, logged, this::asked,
                    notified);
            startingTransport = transport;
            startExit = null;
            introduced = null;
        }
        try {
            transport.start();
            McpJson.warmUpSoon();
        } catch (IOException e) {
            failed("cannot start " + settings.command() + ": " + ServerProcessTransport.systemError(e), transport, null,
                    startStderr);
            return false;
        }
        McpSyncClient client = McpClient.sync(transport)
                // Starting and listing tools may take the start timeout; a call is bounded by the call timeout in call().
                .requestTimeout(startTimeout())
                .initializationTimeout(startTimeout())
                .clientInfo(new McpSchema.Implementation("execache", "gateway"))
                .toolsChangeConsumer(changed -> {
                    scheduler.execute(this::refreshQuietly);
                    // the agent hears it whatever the list shows then, as it would directly
                    notified.accept(McpSchema.METHOD_NOTIFICATION_TOOLS_LIST_CHANGED, Map.of());
                })
                .jsonSchemaValidator(OUTPUT_VALIDATOR)
                .build();
        synchronized (this) {
            startingClient = client;
            if (closed) {
                startingTransport = null;
                startingClient = null;
                transport.stop();
                return false;
            }
        }
        try {
            McpSchema.InitializeResult init = client.initialize();
            synchronized (this) {
                if (startingClient == client) {
                    introduced = init;
                    notifyAll();
                }
            }
            Connection opened = new Connection(client, transport, init.serverInfo(),
                    init.capabilities() != null && init.capabilities().logging() != null, init.instructions(),
                    init.capabilities());
            List<CatalogTool> listed = list(opened);
            synchronized (this) {
                startingTransport = null;
                startingClient = null;
                introduced = null;
                if (closed) {
                    client.close();
                    transport.stop();
                    return false;
                }
                connection = opened;
                connectedAt = clock.instant();
                tools = listed;
                failure = null;
                toldFailure = null;
                notifyAll();
            }
            startStderr.release(true);
            if (!transport.isAlive()) {
                // it died after answering and before it was recorded as connected: nobody else restarts it
                exited(-1);
                return false;
            }
            askLogLevelAgain(opened);
            announce(describe(init.serverInfo()), listed.size());
            return true;
        } catch (RuntimeException e) {
            failed(startFailure(e, transport), transport, client, startStderr);
            return false;
        }
    }

    /** Why a started server did not come up, in one line that names its command. */
    private synchronized String startFailure(RuntimeException e, ServerProcessTransport transport) {
        // a process that ended may be found so by the client's first write before its exit is reported
        Integer exit = startExit != null ? startExit : transport.exitCode();
        if (exit != null) {
            return settings.command() + " exited (code " + exit + ") before it answered";
        }
        String why = rootMessage(e);
        return why.equals(NO_ANSWER) ? settings.command() + " did not answer within " + startTimeout().toSeconds() + " s"
                : settings.command() + " did not start: " + why;
    }

    /**
     * Ends a start that failed and tries again with backoff. The reason is one line on stderr the
     * first time it is seen, and only at DEBUG while the retries fail the same way.
     */
    private void failed(String reason, ServerProcessTransport transport, McpSyncClient client, StartStderr startStderr) {
        if (client != null) {
            closeQuietly(client, transport);
        } else {
            transport.stop();
        }
        Duration delay = nextBackoff();
        boolean tell;
        synchronized (this) {
            if (startingTransport == transport) {
                startingTransport = null;
                startingClient = null;
                introduced = null;
            }
            if (closed) {
                return;
            }
            failure = reason;
            tell = !reason.equals(toldFailure);
            toldFailure = reason;
            notifyAll();
        }
        startStderr.release(tell);
        LOG.log(tell ? Level.WARNING : Level.DEBUG, "server " + settings.name() + ": " + reason + "; trying again in "
                + seconds(delay) + (tell ? ", then with backoff while it fails" : ""));
        scheduleConnect(delay);
    }

    /** Waits while the server is starting and has not answered initialize, at most as long as a start may take. */
    @Override
    void awaitIntroduction() throws InterruptedException {
        awaitConnection(startTimeout(), () -> introduced == null && starting());
    }

    @Override
    String introduction() {
        return introduced == null ? null : introduced.instructions();
    }

    @Override
    String whyDown() {
        return failure;
    }

    @Override
    boolean starting() {
        return failure == null || startingTransport != null;
    }

    @Override
    Set<String> features(Connection current) {
        McpSchema.ServerCapabilities declared = current.capabilities();
        if (declared == null) {
            return Set.of();
        }
        Set<String> features = features(declared.resources() != null, declared.prompts() != null,
                declared.completions() != null);
        // a server execache starts speaks the initialize era (the SDK's client)
        String tasks = tasksFeature(current.transport().declared(), false);
        if (tasks != null) {
            features.add(tasks);
        }
        return features;
    }

    /** The server's connection once its start ended (null if it did not come up) and why it failed, if it did. */
    private record Started(Connection connection, String failure) {
    }

    private Started started() throws InterruptedException {
        awaitStart();
        synchronized (this) {
            return new Started(connection, failure);
        }
    }

    /** A request other than a tool call, through the SDK client's own method for it (see {@code ToolCatalog#ask}). */
    @Override
    String ask(String method, String params) {
        if (!ASKABLE.contains(method) && !TASK_METHODS.contains(method)) {
            throw cannotAsk(settings.name(), method);
        }
        Started started;
        try {
            started = started();
        } catch (InterruptedException e) {
            throw askingCancelled(settings.name(), method);
        }
        Connection current = started.connection();
        String why = started.failure();
        if (current == null) {
            throw new ServerRefusedException(McpSchema.ErrorCodes.INTERNAL_ERROR, why != null
                    ? "server " + settings.name() + " is unavailable: " + why + " (it is tried again in the background)"
                    : "server " + settings.name() + " is not running (it is being started again); try again shortly");
        }
        McpSyncClient client = current.client();
        if (TASK_METHODS.contains(method)) {
            return askTasks(current, method, params);
        }
        try {
            Map<String, Object> given = McpJson.JSON.readValue(params, OBJECT);
            String cursor = given.get("cursor") instanceof String text ? text : null;
            Object result = switch (method) {
                case McpSchema.METHOD_RESOURCES_LIST -> client.listResources(cursor);
                case McpSchema.METHOD_RESOURCES_TEMPLATES_LIST -> client.listResourceTemplates(cursor);
                case McpSchema.METHOD_RESOURCES_READ ->
                        client.readResource(McpJson.JSON.readValue(params, McpSchema.ReadResourceRequest.class));
                case McpSchema.METHOD_PROMPT_LIST -> client.listPrompts(cursor);
                case McpSchema.METHOD_PROMPT_GET -> client.getPrompt(McpJson.JSON.readValue(params, McpSchema.GetPromptRequest.class));
                case McpSchema.METHOD_COMPLETION_COMPLETE ->
                        client.completeCompletion(McpJson.JSON.readValue(params, McpSchema.CompleteRequest.class));
                case McpSchema.METHOD_RESOURCES_SUBSCRIBE -> {
                    client.subscribeResource(McpJson.JSON.readValue(params, McpSchema.SubscribeRequest.class));
                    yield Map.of();
                }
                case McpSchema.METHOD_RESOURCES_UNSUBSCRIBE -> {
                    client.unsubscribeResource(McpJson.JSON.readValue(params, McpSchema.UnsubscribeRequest.class));
                    yield Map.of();
                }
                default -> throw cannotAsk(settings.name(), method);
            };
            return McpJson.JSON.writeValueAsString(result);
        } catch (McpError e) {
            McpSchema.JSONRPCResponse.JSONRPCError error = e.getJsonRpcError();
            throw new ServerRefusedException(error == null ? McpSchema.ErrorCodes.INTERNAL_ERROR : error.code(),
                    error == null ? rootMessage(e) : error.message());
        } catch (JsonProcessingException e) {
            throw new ServerRefusedException(McpSchema.ErrorCodes.INVALID_PARAMS, "the request to server "
                    + settings.name() + " or its answer is not what " + method + " takes: " + e.getOriginalMessage());
        } catch (ServerRefusedException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new ServerRefusedException(McpSchema.ErrorCodes.INTERNAL_ERROR, "asking server " + settings.name()
                    + " " + method + " failed: " + rootMessage(e));
        }
    }

    /** A request of tasks, which the SDK's client has no method for: sent on the transport as the gateway wrote it. */
    private String askTasks(Connection current, String method, String params) {
        McpSchema.JSONRPCResponse response;
        try {
            response = current.transport().request(method, McpJson.JSON.readValue(params, OBJECT), callTimeout);
        } catch (JsonProcessingException e) {
            throw new ServerRefusedException(McpSchema.ErrorCodes.INVALID_PARAMS, "the request to server "
                    + settings.name() + " is not what " + method + " takes: " + e.getOriginalMessage());
        } catch (java.io.IOException e) {
            throw new ServerRefusedException(McpSchema.ErrorCodes.INTERNAL_ERROR, e.getMessage());
        }
        if (response.error() != null) {
            throw new ServerRefusedException(response.error().code(), response.error().message());
        }
        try {
            return McpJson.JSON.writeValueAsString(response.result() == null ? Map.of() : response.result());
        } catch (JsonProcessingException e) {
            throw new ServerRefusedException(McpSchema.ErrorCodes.INTERNAL_ERROR, "the answer of server "
                    + settings.name() + " to " + method + " cannot be written as JSON: " + e.getOriginalMessage());
        }
    }

    @Override
    String instructions(Connection current) {
        return current.instructions();
    }

    @Override
    void askLogLevel(Connection current, McpSchema.LoggingLevel level) {
        if (!current.logs()) {
            return;
        }
        try {
            current.client().setLoggingLevel(level);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "server " + settings.name() + ": setting its log level failed: " + rootMessage(e));
        }
    }

    /** One call in flight and who made it: an agent that can be asked, or (null) code or the command line. */
    private static final class Caller {
        final ToolCatalog.Agent agent;
        /** The threads waiting for the agent's answer to this call's server requests, stopped when the call ends. */
        final Set<Thread> asking = java.util.concurrent.ConcurrentHashMap.newKeySet();

        Caller(ToolCatalog.Agent agent) {
            this.agent = agent;
        }
    }

    @Override
    void rootsChanged(Connection current) {
        current.transport().rootsChanged();
    }

    /** A request of the server's to the agent: relayed to the agent of the latest call, else the session's agent. */
    private Object asked(String method, Map<String, Object> params) {
        Caller caller = callers.peekLast();
        ToolCatalog.Agent agent = caller != null ? caller.agent : sessionAgent;
        if (agent == null) {
            throw new dev.execache.core.spi.AgentRefusedException(McpSchema.ErrorCodes.METHOD_NOT_FOUND, caller != null
                    ? "no agent can be asked " + method + " for this call (made from the command line, by code inside"
                            + " an execute_code call of the 2026-07-28 era, or over HTTP without an event stream)"
                    : "no agent is connected to execache that could answer " + method);
        }
        if (caller != null) {
            caller.asking.add(Thread.currentThread());
        }
        try {
            String answer = agent.ask(method, McpJson.JSON.writeValueAsString(params));
            return McpJson.JSON.readValue(answer, Object.class);
        } catch (JsonProcessingException e) {
            throw new dev.execache.core.spi.AgentRefusedException(McpSchema.ErrorCodes.INTERNAL_ERROR,
                    "the agent's answer to " + method + " is not JSON: " + e.getOriginalMessage());
        } finally {
            if (caller != null) {
                caller.asking.remove(Thread.currentThread());
            }
            // an interrupt meant for this request must not reach the next task of this pooled thread
            Thread.interrupted();
        }
    }

    @Override
    String listingFailed(RuntimeException e) {
        return "server " + settings.name() + ": listing its tools failed: " + rootMessage(e);
    }

    @Override
    String transport() {
        return "pipe";
    }

    /**
     * Calls the tool within the call timeout; what the server asks the agent during the call goes to {@code agent}.
     * When the calling thread is interrupted (the run that made the call ended), the call is cancelled on the server
     * too and this throws a {@link ToolCallCancelledException}; the thread's interrupt is then not kept, the exception
     * says it, so that the caller can still count and store what it must.
     */
    @Override
    ToolResult call(String tool, Map<String, Object> args, Consumer<Map<String, Object>> progress,
            ToolCatalog.Agent agent) {
        Caller caller = new Caller(agent);
        callers.addLast(caller);
        boolean cancelled = false;
        try {
            return callAs(tool, args, progress);
        } catch (ToolCallCancelledException e) {
            cancelled = true;
            throw e;
        } finally {
            callers.remove(caller);
            if (cancelled) {
                // the agent cancelled the call: it will not answer what the server asked during it
                caller.asking.forEach(Thread::interrupt);
            } else if (!caller.asking.isEmpty()) {
                // a request the call's agent was given may not have been the call's (stdio does not say): its answer
                // may still come, for as long as a server waits for one
                scheduleQuietly(() -> caller.asking.forEach(Thread::interrupt), ASKED_AFTER_CALL);
            }
        }
    }

    private void scheduleQuietly(Runnable task, Duration delay) {
        try {
            scheduler.schedule(task, delay.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            task.run();
        }
    }

    private ToolResult callAs(String tool, Map<String, Object> args, Consumer<Map<String, Object>> progress) {
        Started started;
        try {
            started = started();
        } catch (InterruptedException e) {
            throw new ToolCallCancelledException("calling " + tool + " on server " + settings.name()
                    + " was cancelled while the server was starting", false);
        }
        Connection current = started.connection();
        String why = started.failure();
        if (current == null) {
            return failure(why != null ? "server " + settings.name() + " is unavailable: " + why
                    + " (it is tried again in the background)"
                    : "server " + settings.name() + " is starting and did not come up within "
                            + startTimeout().toSeconds() + " s; try again shortly");
        }
        String token = progress == null ? null : progressToken(settings.name());
        Map<String, Object> meta = new HashMap<>(telemetry.current());
        if (token != null) {
            meta.put("progressToken", token);
        }
        McpSchema.CallToolRequest request = meta.isEmpty() ? new McpSchema.CallToolRequest(tool, args)
                : new McpSchema.CallToolRequest(tool, args, meta);
        if (token != null) {
            current.transport().onProgress(token, progress);
        }
        try {
            return send(current, tool, request);
        } finally {
            if (token != null) {
                current.transport().forgetProgress(token);
            }
        }
    }

    private ToolResult send(Connection current, String tool, McpSchema.CallToolRequest request) {
        AtomicBoolean started = new AtomicBoolean();
        Future<CallToolResult> pending = CALLS.submit(() -> {
            if (!started.compareAndSet(false, true)) {
                return null;
            }
            try {
                return current.client().callTool(request);
            } finally {
                current.transport().forget(request);
            }
        });
        try {
            CallToolResult result = pending.get(callTimeout.toNanos(), TimeUnit.NANOSECONDS);
            return new ToolResult(McpJson.JSON.writeValueAsString(result), Boolean.TRUE.equals(result.isError()));
        } catch (TimeoutException e) {
            cancel(current, request, pending, started, "no answer within the call timeout");
            return failure("calling " + tool + " on server " + settings.name() + " failed: no answer in time ("
                    + callTimeout.toMillis() / 1000.0 + " s)");
        } catch (InterruptedException e) {
            boolean reached = cancel(current, request, pending, started, "the run that made the call ended");
            throw new ToolCallCancelledException("calling " + tool + " on server " + settings.name() + " was cancelled"
                    + (reached ? " after it was sent" : " before it was sent"), reached);
        } catch (ExecutionException e) {
            return failure("calling " + tool + " on server " + settings.name() + " failed: " + rootMessage(e.getCause()));
        } catch (JsonProcessingException e) {
            return failure("the answer of " + settings.name() + SEPARATOR + tool + " cannot be written as JSON: "
                    + e.getOriginalMessage());
        } catch (RuntimeException e) {
            return failure("calling " + tool + " on server " + settings.name() + " failed: " + rootMessage(e));
        }
    }

    /** Tells the server the call is cancelled (when it was sent) and stops waiting for it; returns whether it was sent. */
    private static boolean cancel(Connection current, McpSchema.CallToolRequest request, Future<CallToolResult> pending,
            AtomicBoolean started, String reason) {
        boolean sent = current.transport().cancel(request, reason);
        pending.cancel(true);
        if (started.compareAndSet(false, true)) {
            // it never ran and never will
            current.transport().forget(request);
        }
        return sent;
    }

    @Override
    List<CatalogTool> list(Connection current) {
        List<CatalogTool> listed = new ArrayList<>();
        String cursor = null;
        do {
            ListToolsResult page = current.client().listTools(cursor);
            for (McpSchema.Tool tool : page.tools()) {
                listed.add(catalogTool(tool, current.info(), current.transport().listedTool(tool.name())));
            }
            cursor = page.nextCursor();
        } while (cursor != null && !cursor.isEmpty());
        return List.copyOf(listed);
    }

    /**
     * A start's stderr, prefixed with the server's name. A start that retries a failure already said holds its lines
     * until it ends: a retry that fails the same way says nothing again (its lines go to DEBUG, as its reason does),
     * one that comes up or fails otherwise says them.
     */
    private final class StartStderr implements Consumer<String> {
        private List<String> held;
        private boolean dropped;

        StartStderr(boolean hold) {
            held = hold ? new ArrayList<>() : null;
        }

        @Override
        public void accept(String line) {
            synchronized (this) {
                if (held != null) {
                    held.add(line);
                    return;
                }
                if (dropped) {
                    LOG.log(Level.DEBUG, settings.name() + ": " + line);
                    return;
                }
            }
            stderr.accept(settings.name() + ": " + line);
        }

        void release(boolean say) {
            List<String> lines;
            synchronized (this) {
                lines = held;
                held = null;
                dropped = !say;
            }
            if (lines != null) {
                lines.forEach(say ? line -> stderr.accept(settings.name() + ": " + line)
                        : line -> LOG.log(Level.DEBUG, settings.name() + ": " + line));
            }
        }
    }

    private void exited(int code) {
        Connection gone;
        Duration delay;
        McpSyncClient waiting = null;
        synchronized (this) {
            if (connection == null && startingTransport != null) {
                // ended before it answered: the client waiting for its answer need not wait for its timeout
                startExit = code;
                waiting = startingClient;
            }
        }
        if (waiting != null) {
            waiting.close();
            return;
        }
        synchronized (this) {
            gone = connection;
            if (!drop(gone)) {
                return;
            }
            if (connectedAt != null && Duration.between(connectedAt, clock.instant()).compareTo(STABLE) >= 0) {
                failures = 0;
            }
            delay = nextBackoff();
        }
        LOG.log(Level.WARNING, "server " + settings.name() + " exited (code " + code + "); restarting in "
                + delay.toMillis() / 1000.0 + " s");
        closeQuietly(gone.client(), gone.transport());
        scheduleConnect(delay);
    }

    long pid() {
        Connection current;
        synchronized (this) {
            current = connection;
        }
        return current == null ? -1 : current.transport().pid();
    }

    void close() {
        Connection current;
        ServerProcessTransport starting;
        McpSyncClient startingOne;
        synchronized (this) {
            current = markClosed();
            starting = startingTransport;
            startingOne = startingClient;
        }
        if (current != null) {
            closeQuietly(current.client(), current.transport());
        }
        if (starting != null) {
            // a server that never answered: stopped too, not left behind
            starting.stop();
            if (startingOne != null) {
                startingOne.close();
            }
        }
    }

    private static void closeQuietly(McpSyncClient client, ServerProcessTransport transport) {
        transport.stop();
        try {
            client.close();
        } catch (RuntimeException e) {
            // the process is gone already
        }
    }

    private static String rootMessage(Throwable e) {
        Throwable cause = e;
        while (cause.getCause() != null && cause.getCause() != cause) {
            cause = cause.getCause();
        }
        String message = cause.getMessage();
        if (cause instanceof TimeoutException) {
            return NO_ANSWER;
        }
        return message == null ? cause.getClass().getSimpleName() : message;
    }
}
