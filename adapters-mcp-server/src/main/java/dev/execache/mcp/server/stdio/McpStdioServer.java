package dev.execache.mcp.server.stdio;

import dev.execache.mcp.server.protocol.JsonRpc;
import dev.execache.mcp.server.protocol.SubscribedUris;
import dev.execache.gateway.Gateway;
import dev.execache.gateway.Json;
import dev.execache.gateway.ListChangeNotices;
import dev.execache.gateway.OfferedTool;
import dev.execache.gateway.ServeTools;
import dev.execache.mcp.server.protocol.ListenStreams;
import dev.execache.mcp.server.protocol.OwnLog;
import dev.execache.mcp.server.protocol.StatelessProtocol;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.json.schema.JsonSchemaValidator;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * An MCP server on a pair of streams (the process's stdin and stdout), offering
 * {@link ServeTools}. It serves from construction until input ends or {@link #close()}.
 */
public final class McpStdioServer implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("dev.execache.mcp.server");
    private static final Duration CLOSE_LIMIT = Duration.ofSeconds(5);
    private final McpSyncServer server;
    private final StdioTransport transport;
    private final StdioDispatch dispatch;
    private final LogNotifications logs;
    private final StatelessProtocol stateless;
    /** The 2026-07-28 era's subscriptions/listen streams; null without servers behind execache. */
    private final ListenStreams listens;
    private final CompletableFuture<Void> stopped = new CompletableFuture<>();
    private final boolean listsServersTools;
    private final ListChangeNotices listChanges;

    /** What the 2025 era's initialize declares: resources, prompts and completion when a server behind offers them. */
    private static McpSchema.ServerCapabilities capabilities(ServeTools tools) {
        McpSchema.ServerCapabilities.Builder capabilities = McpSchema.ServerCapabilities.builder()
                .tools(tools.gateway() != null).logging();
        java.util.Set<String> offered = tools.gateway() == null ? java.util.Set.of() : tools.gateway().features().offered();
        // resources/* and prompts/* are answered past the SDK's session (StdioDispatch), which has none of its own;
        // the servers' list changes and resource updates are passed on to the session
        if (offered.contains("resources")) {
            capabilities.resources(true, true);
        }
        if (offered.contains("prompts")) {
            capabilities.prompts(true);
        }
        if (offered.contains("completions")) {
            capabilities.completions();
        }
        return capabilities.build();
    }

    private static final JsonSchemaValidator NOTHING_TO_VALIDATE =
            (schema, content) -> JsonSchemaValidator.ValidationResponse.asValid(null);

    public McpStdioServer(ServeTools tools, String version, InputStream in, OutputStream out, Duration drainLimit) {
        McpJsonMapper mapper = new JacksonMcpJsonMapper(new ObjectMapper());
        this.transport = new StdioTransport(in, out, drainLimit);
        this.dispatch = new StdioDispatch(transport, tools.calls());
        this.stateless = new StatelessProtocol(tools, version, mapper, dispatch::notify);
        stateless.askAgentToSignIn();
        stateless.warmUpSoon();
        dispatch.answerStatelessWith(stateless);
        // reading starts once the SDK's server has made its session
        SdkSessionBridge session = new SdkSessionBridge(transport, mapper, dispatch::initialized,
                () -> transport.start(dispatch, dispatch::inputEnded));
        session.instructWith(tools::instructions);
        session.declareTasksWith(() -> tools.gateway() != null && tools.gateway().tasks().offered());
        dispatch.sessionWith(session);
        this.server = McpServer.sync(session)
                .serverInfo("execache", version)
                .instructions(ServeTools.INSTRUCTIONS)
                .jsonMapper(mapper)
                .capabilities(capabilities(tools))
                // nothing for it to check (no tools here, see below): its default validator loads a JSON Schema
                // library before serve can answer initialize
                .jsonSchemaValidator(NOTHING_TO_VALIDATE)
                // no tools: tools/list and tools/call are answered past the SDK's session (StatelessProtocol, which
                // took the tools offered now); asking the gateway for them again here would mark a server that joined
                // in between as told, and StatelessProtocol would never get its tools
                .build();
        this.listsServersTools = tools.listsServersTools();
        this.listChanges = ListChangeNotices.of(this::toolsChanged);
        this.logs = new LogNotifications(dispatch);
        Logger.getLogger("dev.execache").addHandler(logs);
        if (tools.gateway() != null) {
            // the same listen streams as over HTTP, their messages lines of this session's output
            this.listens = new ListenStreams(tools.gateway(), new SubscribedUris(tools.gateway()));
            dispatch.listenWith(listens);
            stateless.deliverNotifications();
            tools.gateway().onNotification(listens::notified);
            tools.gateway().onChange(this::replaceTools);
            // the servers behind the gateway log to the agent as execache does, from the level it set
            dispatch.onLogLevel(tools.gateway()::setLogLevel);
            // the servers' requests to the agent (sampling, elicitation, roots) go to this session's client; its
            // roots changes go to every server
            tools.gateway().setSessionAgent(dispatch::askAgent);
            dispatch.onRootsChanged(tools.gateway()::rootsChanged);
            // an agent that can open a URL for its person is asked at once to sign in to each server that waits for
            // a sign-in: it sees none of such a server's tools, so no call of its own would ask it
            dispatch.onInitialized(() -> signInWaiting(tools.gateway()));
            tools.gateway().onNotification(dispatch::notify);
            tools.gateway().onLog(message -> {
                McpSchema.LoggingLevel level = JsonRpc.level(message.get("level"));
                if (level != null && dispatch.logs(level)) {
                    dispatch.notify(McpSchema.METHOD_NOTIFICATION_MESSAGE, message);
                }
            });
        } else {
            this.listens = null;
        }
    }

    private void signInWaiting(Gateway gateway) {
        if (!dispatch.declared(McpSchema.METHOD_ELICITATION_CREATE, "{\"mode\":\"url\"}")) {
            return;
        }
        try {
            gateway.signInWaiting(dispatch::askAgent);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "asking the agent to sign in to the servers that wait for it failed: " + e.getMessage());
        }
    }

    /**
     * Offers new or changed tools and withdraws others at once; the client hears one notifications/tools/list_changed
     * per burst, when the list holds the servers' tools. The SDK's server is not told: it answers no tools/list nor
     * tools/call here, and its addTool would notify once per tool.
     */
    private void replaceTools(List<OfferedTool> changed, List<String> withdrawn) {
        stateless.replaceTools(changed, withdrawn);
        if (listsServersTools) {
            listChanges.changed();
        }
    }

    private void toolsChanged() {
        dispatch.notify(ListenStreams.TOOLS_CHANGED, Json.MAPPER.createObjectNode());
        listens.toolsChanged();
    }

    /**
     * Waits until every request read so far is answered, at most {@code limit}; returns whether it is. For what may
     * wait while the agent waits for nothing: begun beside its first answers, it took their CPU.
     */
    public boolean awaitAnswered(Duration limit) throws InterruptedException {
        boolean answered = transport.pending().awaitAnswered(limit);
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        return answered;
    }

    /** Blocks until input has ended (and every request read has been answered) or {@link #close()} was called. */
    public void awaitEnd() throws InterruptedException {
        try {
            CompletableFuture.anyOf(transport.ended(), stopped).get();
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
    }

    @Override
    public void close() {
        if (!stopped.complete(null)) {
            return;
        }
        Logger.getLogger("dev.execache").removeHandler(logs);
        stateless.close();
        dispatch.shutDown();
        CompletableFuture<Void> closing = CompletableFuture.runAsync(server::closeGracefully);
        try {
            closing.get(CLOSE_LIMIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
            LOG.log(Level.DEBUG, "MCP server did not close gracefully: " + e);
            server.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            server.close();
        }
    }

    /**
     * What execache logs (store outages, invalidations, Deno being installed...) also goes to the
     * client as notifications/message, at the level the client set with logging/setLevel.
     */
    private static final class LogNotifications extends Handler {
        private final StdioDispatch session;

        LogNotifications(StdioDispatch session) {
            this.session = session;
        }

        @Override
        public void publish(LogRecord record) {
            if (session.logs(OwnLog.level(record.getLevel()))) {
                session.notify(McpSchema.METHOD_NOTIFICATION_MESSAGE, OwnLog.params(record));
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    }
}
