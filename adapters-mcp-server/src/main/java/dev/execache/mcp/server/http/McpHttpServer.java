package dev.execache.mcp.server.http;

import dev.execache.mcp.server.protocol.ListenStreams;
import dev.execache.gateway.InFlightCalls;
import dev.execache.gateway.ListChangeNotices;
import dev.execache.gateway.ServeTools;
import dev.execache.mcp.server.protocol.StatelessProtocol;

import static dev.execache.mcp.server.http.HttpReplies.refuse;
import static dev.execache.mcp.server.http.HttpReplies.text;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.NetworkConnectionLimit;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.GracefulHandler;
import org.eclipse.jetty.server.handler.QoSHandler;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * MCP over Streamable HTTP at {@code /mcp}: every POST is answered on its own (JSON, or for a tool
 * call an SSE stream that carries its progress), in either era, by {@link StatelessProtocol}, so
 * that any instance behind a balancer can answer any request. With servers behind it, what they
 * send outside an answer reaches agents on streams that stay open ({@link HttpNotifications}): a
 * 2025 session's GET stream, a 2026-07-28 {@code subscriptions/listen} answer. A client
 * that closes a tool call's stream cancels the run. Host and Origin are checked against loopback
 * and configured names (DNS rebinding), tokens are asked when there are any, and bodies,
 * concurrency and silence are bounded.
 *
 * <p>Beside MCP it shows the cache's figures: {@code /metrics} (OpenMetrics text, for a scraper),
 * and a dashboard at {@code /} (a page, a stylesheet and a script from the jar) fed by
 * {@code /dashboard.json}. The figures open to any token of {@code /mcp} and to the tokens of the
 * figures alone; the page itself loads without one and asks for it.
 *
 * <p>Its parts, as Jetty handlers from the outside in: Jetty's {@link GracefulHandler} (a stop
 * refuses new requests and waits for those being answered), {@link RequestChecks} (routes, and
 * checks Host, Origin, token and the request's form), Jetty's {@link QoSHandler} (the bound on
 * requests answered at once), and {@link McpPost} (the answer, JSON or SSE).
 */
public final class McpHttpServer implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("dev.execache.mcp.server");

    private final StatelessProtocol protocol;
    private final HttpServeSettings settings;
    private final Server server;
    private final ServerConnector connector;
    private final HttpAccess access;
    private final Dashboard dashboard;
    private final McpPost post;
    /** Counts the requests being answered; once shut down, refuses new ones while those finish. */
    private final GracefulHandler drain;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final InFlightCalls calls;
    /** The servers' notifications to agents: 2025 sessions and 2026-07-28 listen streams; null without servers. */
    private final HttpNotifications notifications;
    /** How often a stream that stays open is written to when nothing happens (a client gone is then noticed). */
    private static final Duration OPEN_STREAM_HEARTBEAT = Duration.ofSeconds(15);

    public McpHttpServer(ServeTools tools, String version, HttpServeSettings settings) {
        this(tools, version, settings, null);
    }

    /**
     * @param openMetrics the text {@code /metrics} answers, read when asked (as {@code execache stats --format
     *     openmetrics} prints it); null: no {@code /metrics}
     */
    public McpHttpServer(ServeTools tools, String version, HttpServeSettings settings, Supplier<String> openMetrics) {
        this.settings = settings;
        this.dashboard = new Dashboard(tools.executor(), tools.settings().store(), version,
                tools.gateway() == null ? List::of : tools.gateway()::servers, Clock.systemUTC());
        this.calls = tools.calls();
        this.protocol = new StatelessProtocol(tools, version, new JacksonMcpJsonMapper(new ObjectMapper()),
                (method, params) -> { });
        protocol.warmUpSoon();
        if (tools.gateway() != null) {
            this.notifications = new HttpNotifications(tools.gateway(), System::nanoTime, Duration.ofMillis(Math.max(1000,
                    Math.min(OPEN_STREAM_HEARTBEAT.toMillis(), settings.idleTimeout().toMillis() / 2))));
            protocol.deliverNotifications();
            // offered at once; the agents hear one list_changed per burst, when the list holds the servers' tools
            ListChangeNotices listChanges = ListChangeNotices.of(notifications::toolsChanged);
            boolean listsServersTools = tools.listsServersTools();
            tools.gateway().onChange((changed, withdrawn) -> {
                protocol.replaceTools(changed, withdrawn);
                if (listsServersTools) {
                    listChanges.changed();
                }
            });
        } else {
            this.notifications = null;
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
        this.post = new McpPost(protocol, access, settings.maxBodyBytes(), this::stopping, notifications);
        // a POST to /mcp that passed the checks is answered within the bound on requests at once:
        // past it, refused at once (no queue), so that a balancer tries another instance
        QoSHandler atOnce = new QoSHandler(post) {
            @Override
            protected void reject(Request request, Response response, Callback callback, int status) {
                response.getHeaders().put(HttpHeader.RETRY_AFTER, "1");
                refuse(response, callback, status, -32000, "Service Unavailable: "
                        + settings.maxConcurrent() + " requests are being answered at once; try again");
            }
        };
        atOnce.setMaxRequestCount(settings.maxConcurrent());
        atOnce.setMaxSuspendedRequestCount(0);
        FiguresPage figures = new FiguresPage(access, dashboard, openMetrics);
        // the streams that stay open (a session's GET, a listen answer) are not among the requests answered at once
        RequestChecks checks = notifications == null ? new RequestChecks(access, figures, settings.maxBodyBytes(), atOnce)
                : new RequestChecks(access, figures, settings.maxBodyBytes(), atOnce, new SessionStreams(notifications),
                        post);
        this.drain = new GracefulHandler(checks) {
            @Override
            protected void handleShutdownRejection(Request request, Response response, Callback callback) {
                if (RequestChecks.isMcp(Request.getPathInContext(request))) {
                    refuse(response, callback, 503, -32000, "the server is shutting down; send it again "
                            + "to another instance or once it is back");
                } else {
                    text(response, callback, 503, "the server is shutting down\n");
                }
            }
        };
        server.setHandler(drain);
        // without it Jetty's stop would not wait for the GracefulHandler at all (close() sets what is left of it)
        server.setStopTimeout(settings.drainLimit().toMillis());
    }

    private boolean stopping() {
        return drain.isShutdown();
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
        return "http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port() + RequestChecks.PATH;
    }

    /** How many 2025-era sessions this instance keeps state of. */
    int sessionsKept() {
        return notifications == null ? 0 : notifications.sessions();
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
        long deadline = System.nanoTime() + settings.drainLimit().toNanos();
        // refusing first, before the calls are stopped, so that no new call starts after them; and by the
        // handler rather than by server.stop(), which would also stop accepting connections: a client that
        // connects meanwhile is told 503 at once instead of waiting for a reset
        CompletableFuture<Void> drained = drain.shutdown();
        if (notifications != null) {
            // the streams that stay open end now (a listen stream with its answer: the subscription ended, not the
            // connection lost), so that the drain does not wait for them
            notifications.close(ListenStreams::endedAnswer);
        }
        calls.cancelAll();
        post.failRelayed("execache is stopping");
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
        // the rest of the drain limit for the connections to close; with none left they are closed at once
        server.setStopTimeout(Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
        try {
            server.stop();
        } catch (Exception e) {
            LOG.log(Level.DEBUG, "stopping the HTTP server: " + e);
        }
        post.close();
        dashboard.close();
        protocol.close();
    }
}
