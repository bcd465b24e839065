package dev.execache.store.redis;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A circuit breaker in front of one Redis: after a call fails for want of an answer, every
 * call fails at once (the caller runs uncached) until Redis is found answering again: by a
 * check run in the background, or by a late reply to the call that gave up. The checks come
 * after a short pause that doubles after each failed check, up to {@link #MAX_PAUSE}, so a slow
 * or absent Redis costs a caller one timeout per outage, not one per operation, and is not
 * hammered while it is down.
 */
final class Breaker implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Breaker.class.getName());
    static final Duration FIRST_PAUSE = Duration.ofMillis(200);
    static final Duration MAX_PAUSE = Duration.ofSeconds(3);

    private final String server;
    private final Supplier<? extends CompletionStage<?>> check;
    private final Duration budget;
    private final ScheduledExecutorService checker;
    /** Told each time Redis is found answering again, outside the breaker's lock. */
    private final Runnable onAnswered;
    /** The failure that made Redis skipped, or null while it is used. */
    private volatile RedisStoreException openBecause;
    private Duration pause = FIRST_PAUSE;
    /** Whether a check is scheduled or running: one at a time. */
    private boolean checkPending;

    /**
     * @param server how messages name Redis (never with credentials)
     * @param check one cheap command; its success closes the breaker
     * @param budget how long the check may take
     * @param onAnswered told each time Redis is found answering again
     */
    Breaker(String server, Supplier<? extends CompletionStage<?>> check, Duration budget, Runnable onAnswered) {
        this.server = server;
        this.onAnswered = onAnswered;
        this.check = check;
        this.budget = budget;
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, "execache-redis-check");
            thread.setDaemon(true);
            return thread;
        });
        executor.setRemoveOnCancelPolicy(true);
        this.checker = executor;
    }

    /** @throws RedisStoreException at once while Redis is skipped */
    void admit() {
        RedisStoreException because = openBecause;
        if (because != null) {
            throw because.again(because.getMessage() + "; skipped until a check in the background finds it answering");
        }
    }

    boolean isOpen() {
        return openBecause != null;
    }

    /** Skips Redis from now on, until it is found answering again. */
    synchronized void open(RedisStoreException because) {
        if (openBecause != null || checker.isShutdown()) {
            return;
        }
        openBecause = because;
        pause = FIRST_PAUSE;
        if (!checkPending) {
            checkPending = true;
            scheduleCheck();
        }
    }

    /**
     * Redis answered a call after all: it is used again from now on. (Said at debug level only:
     * the caller's own guard says once that the store answers again, with what the outage cost.)
     */
    void answered() {
        synchronized (this) {
            if (openBecause == null || checker.isShutdown()) {
                return;
            }
            openBecause = null;
        }
        LOG.log(Level.DEBUG, "Redis at " + server + " answers again");
        onAnswered.run();
    }

    private void scheduleCheck() {
        checker.schedule(this::runCheck, pause.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void runCheck() {
        synchronized (this) {
            if (openBecause == null) {
                checkPending = false;
                return;
            }
        }
        boolean answered;
        try {
            Budget.await(check.get().toCompletableFuture(), budget);
            answered = true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        } catch (Exception e) {
            answered = false;
        }
        synchronized (this) {
            if (checker.isShutdown()) {
                return;
            }
            if (answered || openBecause == null) {
                checkPending = false;
                answered();
            } else {
                pause = pause.multipliedBy(2).compareTo(MAX_PAUSE) > 0 ? MAX_PAUSE : pause.multipliedBy(2);
                scheduleCheck();
            }
        }
    }

    @Override
    public synchronized void close() {
        checker.shutdownNow();
    }
}
