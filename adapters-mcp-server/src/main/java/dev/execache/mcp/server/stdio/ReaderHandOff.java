package dev.execache.mcp.server.stdio;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Which call the stdio reading thread is answering now, so that a watchdog can hand reading on to another thread when
 * that call takes long: a cache hit is answered with no thread hand-off, and the next line (a cancellation, the
 * agent's answer to what a server asked during the call) is still read while a long call runs.
 */
final class ReaderHandOff {
    private final long handOnAfterNanos;
    private final AtomicReference<Call> current = new AtomicReference<>();

    /** @param handOnAfterNanos how long the reading thread may answer one call before reading is handed on */
    ReaderHandOff(long handOnAfterNanos) {
        this.handOnAfterNanos = handOnAfterNanos;
    }

    /** The reading thread begins answering a call at {@code now} (System.nanoTime()). */
    Call begin(long now) {
        Call call = new Call(now);
        current.set(call);
        return call;
    }

    /**
     * The reading thread has answered {@code call}.
     *
     * @return whether it keeps reading: false when reading was handed on meanwhile
     */
    boolean end(Call call) {
        // only if still its own: once reading was handed on, the next reader may have begun a call of its own (the
        // agent sends the next call as soon as this one's answer is written); clearing that one would leave it never
        // handed on, and nobody would read the agent's answers to what its server asks during it
        current.compareAndSet(call, null);
        return call.state.compareAndSet(Call.RUNNING, Call.DONE);
    }

    /** Whether reading must be handed on now: the current call has run long enough (true once per call). */
    boolean handOnIfDue(long now) {
        Call call = current.get();
        return call != null && now - call.since >= handOnAfterNanos
                && call.state.compareAndSet(Call.RUNNING, Call.HANDED_ON);
    }

    /** Whether the reading thread is answering a call now. */
    boolean busy() {
        return current.get() != null;
    }

    /** A call answered by the reading thread: it finishes first, or reading is handed on first. */
    static final class Call {
        private static final int RUNNING = 0;
        private static final int DONE = 1;
        private static final int HANDED_ON = 2;
        private final AtomicInteger state = new AtomicInteger(RUNNING);
        private final long since;

        private Call(long since) {
            this.since = since;
        }
    }
}
