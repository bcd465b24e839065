package dev.execache.mcp.server.http;

import dev.execache.mcp.server.protocol.JsonText;

import java.io.IOException;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Blocker;

/** Writes an SSE stream one event at a time, from any thread; the first failed write says the client is gone. */
final class SseWriter {
    private final Response response;
    private final Runnable onGone;
    private boolean gone;
    private boolean ended;
    private boolean written;

    SseWriter(Response response, Runnable onGone) {
        this.response = response;
        this.onGone = onGone;
    }

    /** Writes an event (or a comment, as a heartbeat); false when the client is gone or the stream has ended. */
    synchronized boolean write(String text, boolean last) {
        if (gone || ended) {
            return false;
        }
        try (Blocker.Callback written = Blocker.callback()) {
            Content.Sink.write(response, last, text, written);
            written.block();
            ended = last;
            this.written = true;
            return true;
        } catch (IOException | RuntimeException e) {
            gone = true;
            onGone.run();
            return false;
        }
    }

    /** Whether the stream was ended by its last write, the client there to the end. */
    synchronized boolean endedWritten() {
        return ended && !gone;
    }

    /**
     * Ends the stream before anything went out, so that the answer can go as a plain response instead; false when
     * something was written already (the status and headers are out).
     */
    synchronized boolean endUnwritten() {
        if (written || gone || ended) {
            return false;
        }
        ended = true;
        return true;
    }

    /** One JSON-RPC message as an SSE event named message, on one data line. */
    static String event(String json) {
        return "event: message\ndata: " + JsonText.escapeLoneSurrogates(json.replace("\r\n", "\\n")
                .replace("\n", "\\n").replace("\r", "\\n")) + "\n\n";
    }
}
