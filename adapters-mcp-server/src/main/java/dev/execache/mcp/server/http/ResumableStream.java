package dev.execache.mcp.server.http;

import java.time.Duration;
import java.util.ArrayDeque;

/**
 * One event stream of a 2025-era session that its client may resume (a GET with {@code Last-Event-ID}, SEP-1699): the
 * session's own stream, or a tool call's answer. Each event carries an id, {@code STREAM-N}, unique within the session,
 * and the latest {@value #MAX_EVENTS} are kept, so that a client whose connection broke is sent what it missed; a
 * call's answer, its stream's last event, is the newest and so always kept. Kept by the instance that wrote it.
 */
final class ResumableStream {
    static final int MAX_EVENTS = SseNotificationStream.MAX_QUEUED;
    /** How long a client that lost a stream waits before it reconnects: the SSE {@code retry} of the priming event. */
    static final Duration RECONNECT_AFTER = Duration.ofSeconds(1);

    /** Where the events go while a client reads the stream. */
    interface Sink {
        /** Writes SSE text; {@code last} ends the HTTP answer. False when the client is gone. */
        boolean write(String text, boolean last);
    }

    private record Event(long number, String text, boolean last) {
    }

    final String id;
    private final ArrayDeque<Event> events = new ArrayDeque<>();
    private long next = 1;
    /** The number of the last event handed to a sink. */
    private long written;
    private Sink sink;
    private boolean finished;

    ResumableStream(String id) {
        this.id = id;
    }

    /**
     * Gives the stream a client: a priming event first when {@code prime} (an id to resume from and the {@code retry}),
     * then the events after number {@code after} (after the last one handed to a client when null), then what comes.
     * A client already on it is ended first when {@code takeOver} (one that reconnects has lost it), else this one is
     * refused (false). A finished stream ends once replayed.
     */
    synchronized boolean attach(Sink client, Long after, boolean prime, boolean takeOver) {
        if (sink != null && sink != client) {
            if (!takeOver) {
                return false;
            }
            sink.write("", true);
        }
        long from = after == null ? written : after;
        sink = client;
        if (prime && !write("id: " + id + "-" + from + "\nretry: " + RECONNECT_AFTER.toMillis() + "\ndata:\n\n", false)) {
            return true;
        }
        boolean ended = false;
        for (Event event : events) {
            if (event.number() > from) {
                if (!write(event.text(), event.last())) {
                    return true;
                }
                written = Math.max(written, event.number());
                ended = event.last();
            }
        }
        if (finished && !ended) {
            write("", true);
        }
        if (finished) {
            sink = null;
        }
        return true;
    }

    /** Ends the stream of the client reading it, if one does. */
    synchronized void end() {
        if (sink != null) {
            sink.write("", true);
            sink = null;
        }
    }

    /** An event: kept, and written to the client reading the stream if there is one; false when none read it now. */
    synchronized boolean send(String json, boolean last) {
        if (finished) {
            return false;
        }
        long number = next++;
        Event event = new Event(number, "id: " + id + "-" + number + "\n" + SseWriter.event(json), last);
        events.add(event);
        while (events.size() > MAX_EVENTS) {
            events.poll();
        }
        finished = last;
        boolean sent = sink != null && write(event.text(), last);
        if (sent) {
            written = number;
        }
        if (last) {
            sink = null;
        }
        return sent;
    }

    /** A comment to the client reading the stream, so that one gone is noticed; false when none reads it. */
    synchronized boolean keepAlive() {
        return sink != null && write(":\n\n", false);
    }

    private boolean write(String text, boolean last) {
        if (sink.write(text, last)) {
            return true;
        }
        sink = null;
        return false;
    }

    /** The client {@code client} is gone. */
    synchronized void detach(Sink client) {
        if (sink == client) {
            sink = null;
        }
    }

    synchronized boolean hasClient() {
        return sink != null;
    }

    synchronized boolean finished() {
        return finished;
    }

    /**
     * The number in an event id of this session's, {@code STREAM-N}: its stream and the number; null when it is not
     * one.
     */
    static Cursor cursor(String lastEventId) {
        if (lastEventId == null) {
            return null;
        }
        int dash = lastEventId.lastIndexOf('-');
        if (dash <= 0) {
            return null;
        }
        try {
            return new Cursor(lastEventId.substring(0, dash), Long.parseLong(lastEventId.substring(dash + 1)));
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** Where a client stopped reading: a stream's id and the number of the last event it got. */
    record Cursor(String stream, long number) {
    }
}
