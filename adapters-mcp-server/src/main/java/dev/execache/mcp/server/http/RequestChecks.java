package dev.execache.mcp.server.http;

import dev.execache.mcp.server.protocol.JsonRpc;

import static dev.execache.mcp.server.http.HttpReplies.printable;
import static dev.execache.mcp.server.http.HttpReplies.refuse;

import io.modelcontextprotocol.spec.McpSchema;
import java.lang.System.Logger.Level;
import java.util.Locale;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * Routes a request and checks it (Host, Origin, token, method, media types, length); a POST to
 * /mcp that passes goes on to the wrapped handler, but for what stays open while its agent runs and
 * so is not counted among the requests answered at once: a 2025 session's GET and DELETE (to {@code
 * sessions}) and a 2026-07-28 {@code subscriptions/listen} POST (to {@code listens}, by its
 * {@code Mcp-Method} header, which the answer checks against the body).
 */
final class RequestChecks extends Handler.Wrapper {
    private static final System.Logger LOG = System.getLogger("dev.execache.mcp.server");
    static final String PATH = "/mcp";

    private final HttpAccess access;
    private final FiguresPage figures;
    private final int maxBodyBytes;
    /** A session's GET and DELETE; null without sessions (no servers behind execache). */
    private final Handler sessions;
    /** Where a subscriptions/listen POST goes; null without servers behind execache. */
    private final Handler listens;

    RequestChecks(HttpAccess access, FiguresPage figures, int maxBodyBytes, Handler answering) {
        this(access, figures, maxBodyBytes, answering, null, null);
    }

    RequestChecks(HttpAccess access, FiguresPage figures, int maxBodyBytes, Handler answering, Handler sessions,
            Handler listens) {
        super(answering);
        this.access = access;
        this.figures = figures;
        this.maxBodyBytes = maxBodyBytes;
        this.sessions = sessions;
        this.listens = listens;
    }

    static boolean isMcp(String path) {
        return PATH.equals(path) || (PATH + "/").equals(path);
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception {
        String path = Request.getPathInContext(request);
        boolean mcp = isMcp(path);
        boolean metadata = access.isMetadataPath(path);
        if (!mcp && !metadata && !FiguresPage.isFigures(path) && !FiguresPage.isPage(path)) {
            return refuse(response, callback, 404, McpSchema.ErrorCodes.INVALID_REQUEST,
                    "Not Found: MCP is at " + PATH + ", the dashboard at /, the figures at " + FiguresPage.METRICS_PATH);
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
            return figures.showMetadata(request, response, callback);
        }
        if (!mcp) {
            return figures.show(request, response, callback, path);
        }
        HttpAccess.Decision decision = access.callerOfMcp(request.getHeaders().get(HttpHeader.AUTHORIZATION));
        if (decision.refusal() != null) {
            return refuse(response, callback, decision.refusal());
        }
        if (sessions != null && SessionStreams.isFor(request)) {
            request.setAttribute(McpPost.CALLER, decision.caller());
            return sessions.handle(request, response, callback);
        }
        if (!"POST".equals(request.getMethod())) {
            response.getHeaders().put(HttpHeader.ALLOW, "POST");
            return refuse(response, callback, 405, -32000, "Method Not Allowed: send each message as a POST"
                    + (sessions == null ? " (without servers behind execache there is no session stream to GET or DELETE)"
                    : " (a GET opens, a DELETE ends, the session that initialize gave: send its "
                    + SessionStreams.SESSION_HEADER + " header)"));
        }
        String contentType = request.getHeaders().get(HttpHeader.CONTENT_TYPE);
        if (contentType == null || !contentType.toLowerCase(Locale.ROOT).startsWith("application/json")) {
            return refuse(response, callback, 415, McpSchema.ErrorCodes.INVALID_REQUEST,
                    "Unsupported Media Type: the body must be application/json");
        }
        String accept = request.getHeaders().get(HttpHeader.ACCEPT);
        if (accept != null && !McpPost.streams(request) && !accept.toLowerCase(Locale.ROOT).contains("application/json")
                && !accept.contains("*/*")) {
            return refuse(response, callback, 406, McpSchema.ErrorCodes.INVALID_REQUEST,
                    "Not Acceptable: accept application/json and text/event-stream");
        }
        if (request.getLength() > maxBodyBytes) {
            return McpPost.tooLarge(response, callback, maxBodyBytes);
        }
        request.setAttribute(McpPost.CALLER, decision.caller());
        if (listens != null && JsonRpc.LISTEN.equals(request.getHeaders().get("Mcp-Method"))) {
            request.setAttribute(McpPost.LISTEN_ROUTE, Boolean.TRUE);
            return listens.handle(request, response, callback);
        }
        return super.handle(request, response, callback);
    }
}
