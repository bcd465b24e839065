package dev.execache.mcp.server.http;

import dev.execache.mcp.server.protocol.NotificationStream;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * A long-lived SSE stream of notifications over HTTP (a 2025 session's GET stream, a 2026-07-28
 * {@code subscriptions/listen} answer). Unlike a tool call's stream it holds no thread: events are
 * queued and written one after another by Jetty's callbacks, so a server's notification never waits
 * for a slow client. A client that reads nothing for {@value #MAX_QUEUED} events, or whose write
 * fails, is gone: the stream ends and {@code onGone} is told once.
 */
final class SseNotificationStream implements NotificationStream {
    /** The most events queued for a client that reads nothing, before it is taken as gone. */
    static final int MAX_QUEUED = 256;

    private final Response response;
    private final Callback finished;
    private volatile Runnable onGone;
    private final ArrayDeque<Item> queue = new ArrayDeque<>();
    private boolean writing;
    private boolean ending;
    private boolean ended;

    private record Item(byte[] bytes, boolean last) {
    }

    /**
     * @param finished the HTTP request's callback, completed when the stream ends
     * @param onGone told once when the stream ended, whoever ended it
     */
    SseNotificationStream(Response response, Callback finished, Runnable onGone) {
        this.response = response;
        this.finished = finished;
        this.onGone = onGone;
    }

    /** Answers a request with a stream that stays open: the headers of an SSE answer, no idle timeout. */
    static SseNotificationStream open(Request request, Response response, Callback callback, Runnable onGone) {
        response.setStatus(200);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/event-stream");
        response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-cache, no-transform");
        // nginx would otherwise hold back the stream
        response.getHeaders().put("X-Accel-Buffering", "no");
        // silence is normal on it; the heartbeat notices a client gone
        request.addIdleTimeoutListener(timeout -> false);
        return new SseNotificationStream(response, callback, onGone);
    }

    /** What to tell once when the stream ended, in place of what it was opened with. */
    void onGone(Runnable told) {
        this.onGone = told;
    }

    /** SSE text as it is (an event with its id, a comment); {@code last} ends the stream. False when it has ended. */
    boolean write(String text, boolean last) {
        return enqueue(text, last);
    }

    @Override
    public boolean send(String json) {
        return enqueue(SseWriter.event(json), false);
    }

    /** A comment line, so that a client that went away is noticed and intermediaries keep the stream open. */
    @Override
    public boolean keepAlive() {
        return enqueue(":\n\n", false);
    }

    @Override
    public void end(String lastJson) {
        enqueue(lastJson == null ? "" : SseWriter.event(lastJson), true);
    }

    @Override
    public synchronized boolean isOpen() {
        return !ending && !ended;
    }

    private boolean enqueue(String text, boolean last) {
        boolean overflow = false;
        synchronized (this) {
            if (ending || ended) {
                return false;
            }
            if (queue.size() >= MAX_QUEUED) {
                overflow = true;
            } else {
                queue.add(new Item(text.getBytes(StandardCharsets.UTF_8), last));
                ending = last;
                if (writing) {
                    return true;
                }
                writing = true;
            }
        }
        if (overflow) {
            finish(false);
            return false;
        }
        writeNext();
        return true;
    }

    private void writeNext() {
        Item item;
        synchronized (this) {
            item = queue.poll();
            if (item == null || ended) {
                writing = false;
                return;
            }
        }
        response.write(item.last(), ByteBuffer.wrap(item.bytes()), new Callback() {
            @Override
            public void succeeded() {
                if (item.last()) {
                    finish(true);
                } else {
                    writeNext();
                }
            }

            @Override
            public void failed(Throwable failure) {
                finish(false);
            }
        });
    }

    private void finish(boolean written) {
        synchronized (this) {
            if (ended) {
                return;
            }
            ended = true;
            queue.clear();
        }
        if (written) {
            finished.succeeded();
        } else {
            finished.failed(new java.io.IOException("the client's notification stream is gone"));
        }
        onGone.run();
    }
}
