package dev.execache.mcp.server.http;

import static dev.execache.mcp.server.http.HttpReplies.refuse;

import io.modelcontextprotocol.spec.McpSchema;
import java.lang.System.Logger.Level;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * A 2025-era session's GET (its notification stream, or with {@code Last-Event-ID} a stream of the session resumed)
 * and DELETE (its end), after {@link RequestChecks}. Outside the
 * bound on requests answered at once: a stream stays open while its agent runs, and the sessions bound them.
 */
final class SessionStreams extends Handler.Abstract {
    private static final System.Logger LOG = System.getLogger("dev.execache.mcp.server");
    static final String SESSION_HEADER = "Mcp-Session-Id";
    /** Where a client that lost a stream stopped reading it (SSE's header). */
    static final String LAST_EVENT_ID = "Last-Event-ID";
    /** MCP's error for a session this server does not have (the spec's 404). */
    private static final int NO_SESSION = -32001;

    private final HttpNotifications notifications;

    SessionStreams(HttpNotifications notifications) {
        this.notifications = notifications;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        String id = request.getHeaders().get(SESSION_HEADER);
        HttpAccess.Caller caller = (HttpAccess.Caller) request.getAttribute(McpPost.CALLER);
        if ("DELETE".equals(request.getMethod())) {
            String refusal = notifications.end(id, caller.agent());
            if (refusal != null) {
                return refuse(response, callback, 404, NO_SESSION, "Not Found: " + refusal);
            }
            response.setStatus(200);
            callback.succeeded();
            return true;
        }
        if (!McpPost.streams(request)) {
            return refuse(response, callback, 406, McpSchema.ErrorCodes.INVALID_REQUEST,
                    "Not Acceptable: the session's stream is text/event-stream; accept it");
        }
        HttpNotifications.Found found = notifications.session(id, caller.agent());
        if (found.session() == null) {
            return refuse(response, callback, 404, NO_SESSION, "Not Found: " + found.refusal());
        }
        HttpNotifications.Session session = found.session();
        ResumableStream.Cursor cursor = ResumableStream.cursor(request.getHeaders().get(LAST_EVENT_ID));
        ResumableStream resumed = cursor == null ? null : notifications.stream(session, cursor.stream());
        SseNotificationStream opened = SseNotificationStream.open(request, response, callback, () -> { });
        if (resumed != null && !notifications.isOwn(session, resumed)) {
            // a tool call's stream that broke: what it missed, then the rest of it, its answer last
            ResumableStream.Sink sink = opened::write;
            opened.onGone(() -> resumed.detach(sink));
            resumed.attach(sink, cursor.number(), false, true);
            return true;
        }
        if (!notifications.attach(session, opened, resumed == null ? null : cursor.number())) {
            // one stream per session: the second ends at once, empty
            LOG.log(Level.DEBUG, "a second GET stream for one session was ended");
            opened.end(null);
        }
        return true;
    }

    /** Whether a request is a session's GET or DELETE. */
    static boolean isFor(Request request) {
        String method = request.getMethod();
        return request.getHeaders().get(SESSION_HEADER) != null && ("GET".equals(method) || "DELETE".equals(method));
    }
}
