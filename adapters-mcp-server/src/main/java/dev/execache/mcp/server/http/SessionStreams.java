package dev.execache.mcp.server.http;

import static dev.execache.mcp.server.http.HttpReplies.printable;
import static dev.execache.mcp.server.http.HttpReplies.refuse;

import io.modelcontextprotocol.spec.McpSchema;
import java.lang.System.Logger.Level;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * A 2025-era session's GET (its notification stream) and DELETE (its end), after {@link RequestChecks}. Outside the
 * bound on requests answered at once: a stream stays open while its agent runs, and the sessions bound them.
 */
final class SessionStreams extends Handler.Abstract {
    private static final System.Logger LOG = System.getLogger("dev.execache.mcp.server");
    static final String SESSION_HEADER = "Mcp-Session-Id";
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
        if (notifications.wasEnded(id)) {
            return refuse(response, callback, 404, NO_SESSION, "Not Found: session " + printable(id)
                    + " was ended; send initialize for a new one");
        }
        if ("DELETE".equals(request.getMethod())) {
            if (!notifications.end(id, caller.agent())) {
                return refuse(response, callback, 404, NO_SESSION, "Not Found: no session " + printable(id)
                        + " of this caller here");
            }
            response.setStatus(200);
            callback.succeeded();
            return true;
        }
        if (!McpPost.streams(request)) {
            return refuse(response, callback, 406, McpSchema.ErrorCodes.INVALID_REQUEST,
                    "Not Acceptable: the session's stream is text/event-stream; accept it");
        }
        HttpNotifications.Session session = notifications.session(id, caller.agent());
        if (session == null) {
            return refuse(response, callback, 404, NO_SESSION, "Not Found: session " + printable(id)
                    + " is another caller's");
        }
        SseNotificationStream[] opened = new SseNotificationStream[1];
        opened[0] = SseNotificationStream.open(request, response, callback, () -> notifications.detach(session, opened[0]));
        if (!notifications.attach(session, opened[0])) {
            // one stream per session: the second ends at once, empty
            LOG.log(Level.DEBUG, "a second GET stream for one session was ended");
            opened[0].end(null);
            return true;
        }
        // the headers go out now, so that the client knows its stream is open
        opened[0].keepAlive();
        return true;
    }

    /** Whether a request is a session's GET or DELETE. */
    static boolean isFor(Request request) {
        String method = request.getMethod();
        return request.getHeaders().get(SESSION_HEADER) != null && ("GET".equals(method) || "DELETE".equals(method));
    }
}
