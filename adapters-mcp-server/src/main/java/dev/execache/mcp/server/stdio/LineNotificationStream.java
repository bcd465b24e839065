package dev.execache.mcp.server.stdio;

import dev.execache.mcp.server.protocol.NotificationStream;

import java.util.function.Consumer;

/**
 * A {@code subscriptions/listen} stream on stdio: its messages are lines of the one output, among the session's
 * others (each tagged with its listen request's id, so that the agent tells them apart). Nothing needs keeping alive
 * on a pipe. It ends when the agent cancels the listen request, when input ends, or when serve stops.
 */
final class LineNotificationStream implements NotificationStream {
    private final Consumer<String> out;
    private final Runnable onGone;
    private boolean ended;

    /**
     * @param out writes one line
     * @param onGone told once when the stream ended, whoever ended it
     */
    LineNotificationStream(Consumer<String> out, Runnable onGone) {
        this.out = out;
        this.onGone = onGone;
    }

    @Override
    public boolean send(String json) {
        synchronized (this) {
            if (ended) {
                return false;
            }
            // under this stream's lock, so that a message sent before the stream ended is not written after its end
            out.accept(json);
        }
        return true;
    }

    @Override
    public synchronized boolean keepAlive() {
        return !ended;
    }

    @Override
    public void end(String lastJson) {
        synchronized (this) {
            if (ended) {
                return;
            }
            ended = true;
            if (lastJson != null) {
                out.accept(lastJson);
            }
        }
        onGone.run();
    }

    @Override
    public synchronized boolean isOpen() {
        return !ended;
    }
}
