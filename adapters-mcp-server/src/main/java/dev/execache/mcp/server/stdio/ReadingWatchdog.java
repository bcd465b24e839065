package dev.execache.mcp.server.stdio;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Lets the thread that reads stdin answer a call itself, so that a cache hit costs no thread
 * hand-off, and hands reading on to another thread when {@link ReaderHandOff} says the call has
 * run for {@link #HAND_ON_AFTER} (a miss that runs code, say), so that the next line (a
 * cancellation, say) is still read within a few milliseconds. It ticks only while calls come (and
 * sleeps {@link #WATCH_IDLE} after the last), so an idle server costs nothing and a quick call
 * costs it no wake-up.
 */
final class ReadingWatchdog implements Runnable {
    /** How long the reading thread may answer a call before another thread takes over reading. */
    private static final long HAND_ON_AFTER = TimeUnit.MILLISECONDS.toNanos(2);
    /** How long the watchdog keeps ticking after the last call, before it sleeps until the next one. */
    private static final long WATCH_IDLE = TimeUnit.SECONDS.toNanos(1);

    private final ReaderHandOff handOff = new ReaderHandOff(HAND_ON_AFTER);
    private final Executor workers;
    private final Runnable readOn;
    private final BooleanSupplier over;
    private final Thread thread;
    private volatile boolean sleeping;

    /**
     * @param workers where reading goes on
     * @param readOn reads on (the reading loop)
     * @param over whether reading has ended for good, when the watchdog stops
     */
    ReadingWatchdog(Executor workers, Runnable readOn, BooleanSupplier over) {
        this.workers = workers;
        this.readOn = readOn;
        this.over = over;
        this.thread = new Thread(this, "execache-mcp-watchdog");
        thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    /** Answers a call on the reading thread; false when reading was handed on while it ran. */
    boolean answerWhileReading(Runnable call) {
        ReaderHandOff.Call current = handOff.begin(System.nanoTime());
        if (sleeping) {
            sleeping = false;
            LockSupport.unpark(thread);
        }
        boolean keepReading;
        try {
            call.run();
        } finally {
            keepReading = handOff.end(current);
        }
        return keepReading;
    }

    @Override
    public void run() {
        long lastSeen = System.nanoTime();
        while (!over.getAsBoolean()) {
            long now = System.nanoTime();
            if (handOff.busy()) {
                lastSeen = now;
                if (handOff.handOnIfDue(now)) {
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
                if (!handOff.busy()) {
                    // at most a second, to notice the end
                    LockSupport.parkNanos(WATCH_IDLE);
                }
                sleeping = false;
            }
        }
    }
}
