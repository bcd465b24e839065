package dev.execache.mcp.server;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Lets the thread that reads stdin answer a call itself, so that a cache hit costs no thread
 * hand-off; when the call is still running after {@link #HAND_ON_AFTER} (a miss that runs code,
 * say), a watchdog hands reading on to another thread, so that the next line (a cancellation,
 * say) is still read within a few milliseconds. The watchdog ticks only while calls come (and
 * sleeps {@link #WATCH_IDLE} after the last), so an idle server costs nothing and a quick call
 * costs it no wake-up.
 */
final class ReadingHandOff implements Runnable {
    /** How long the reading thread may answer a call before another thread takes over reading. */
    private static final long HAND_ON_AFTER = TimeUnit.MILLISECONDS.toNanos(2);
    /** How long the watchdog keeps ticking after the last call, before it sleeps until the next one. */
    private static final long WATCH_IDLE = TimeUnit.SECONDS.toNanos(1);

    private final Executor workers;
    private final Runnable readOn;
    private final BooleanSupplier over;
    private final Thread watchdog;
    /** The call the reading thread is answering now; null between calls. */
    private volatile InlineCall current;
    private volatile boolean sleeping;

    /**
     * @param workers where reading goes on
     * @param readOn reads on (the reading loop)
     * @param over whether reading has ended for good, when the watchdog stops
     */
    ReadingHandOff(Executor workers, Runnable readOn, BooleanSupplier over) {
        this.workers = workers;
        this.readOn = readOn;
        this.over = over;
        this.watchdog = new Thread(this, "execache-mcp-watchdog");
        watchdog.setDaemon(true);
    }

    void start() {
        watchdog.start();
    }

    /** Answers a call on the reading thread; false when reading was handed on while it ran. */
    boolean answerWhileReading(Runnable call) {
        InlineCall inline = new InlineCall(System.nanoTime());
        current = inline;
        if (sleeping) {
            sleeping = false;
            LockSupport.unpark(watchdog);
        }
        try {
            call.run();
        } finally {
            current = null;
        }
        return inline.finish();
    }

    @Override
    public void run() {
        long lastSeen = System.nanoTime();
        while (!over.getAsBoolean()) {
            InlineCall inline = current;
            long now = System.nanoTime();
            if (inline != null) {
                lastSeen = now;
                if (now - inline.since >= HAND_ON_AFTER && inline.handOn()) {
                    try {
                        workers.execute(readOn);
                    } catch (RejectedExecutionException e) {
                        return;
                    }
                }
            }
            if (now - lastSeen < WATCH_IDLE) {
                LockSupport.parkNanos(HAND_ON_AFTER / 2);
            } else {
                sleeping = true;
                if (current == null) {
                    // at most a second, to notice the end
                    LockSupport.parkNanos(WATCH_IDLE);
                }
                sleeping = false;
            }
        }
    }

    /** A call answered by the reading thread: it finishes first, or reading is handed on first. */
    private static final class InlineCall {
        private static final int RUNNING = 0;
        private static final int DONE = 1;
        private static final int HANDED_ON = 2;
        private final AtomicInteger state = new AtomicInteger(RUNNING);
        private final long since;

        InlineCall(long since) {
            this.since = since;
        }

        /** Whether the reading thread keeps reading: the call finished before reading was handed on. */
        boolean finish() {
            return state.compareAndSet(RUNNING, DONE);
        }

        boolean handOn() {
            return state.compareAndSet(RUNNING, HANDED_ON);
        }
    }
}
