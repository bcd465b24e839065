package dev.execache.mcp.server.protocol;

/**
 * A stream of notifications to one agent that stays open: over HTTP an SSE answer ({@code SseNotificationStream}: a
 * 2025 session's GET stream, a 2026-07-28 {@code subscriptions/listen} answer), on stdio the lines of one
 * {@code subscriptions/listen} among the session's others ({@code LineNotificationStream}).
 */
public interface NotificationStream {
    /** Sends one JSON-RPC message; false when the stream has ended. */
    boolean send(String json);

    /** Shows the stream is alive where a transport needs it (an SSE comment); false when the stream has ended. */
    boolean keepAlive();

    /** Ends the stream after what was sent, with one last message (null for none). */
    void end(String lastJson);

    boolean isOpen();
}
