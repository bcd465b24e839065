package dev.execache.sandbox;

import java.time.Duration;
import java.util.ArrayList;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Runners started ahead of time with one set of flags, each waiting on its stdin for the one
 * request it will run. A request takes one if there is one and never waits for a refill; the
 * pool is refilled in the background, also when an idle runner dies.
 */
final class WarmPool implements AutoCloseable {
    private static final Duration EARLY_DEATH = Duration.ofSeconds(1);
    private static final int MAX_EARLY_DEATHS = 3;
    private final DenoRuntime runtime;
    private final LaunchFlags flags;
    private final int size;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition idleAdded = lock.newCondition();
    private final Deque<Runner> idle = new ArrayDeque<>();
    private final ExecutorService starter;
    private int starting;
    private int earlyDeaths;
    private boolean closed;

    WarmPool(DenoRuntime runtime, LaunchFlags flags, int size) {
        this.runtime = runtime;
        this.flags = flags;
        this.size = size;
        this.starter = Executors.newSingleThreadExecutor(task -> {
            Thread thread = new Thread(task, "execache-deno-pool");
            thread.setDaemon(true);
            return thread;
        });
    }

    /** A waiting runner started with exactly these flags, or null: the caller then starts one itself. */
    Runner take(LaunchFlags requested) {
        if (!flags.equals(requested)) {
            return null;
        }
        lock.lock();
        try {
            while (!idle.isEmpty()) {
                Runner runner = idle.pollFirst();
                if (runner.isAlive()) {
                    return runner;
                }
            }
            return null;
        } finally {
            lock.unlock();
        }
    }

    /** Starts runners in the background until the pool is full again; called after every request. */
    void refill() {
        lock.lock();
        try {
            earlyDeaths = 0;
        } finally {
            lock.unlock();
        }
        fill();
    }

    private void fill() {
        lock.lock();
        try {
            while (!closed && idle.size() + starting < size) {
                starting++;
                starter.execute(this::startOne);
            }
        } finally {
            lock.unlock();
        }
    }

    private void startOne() {
        Runner runner = null;
        try {
            runner = Runner.start(runtime, flags);
        } catch (RuntimeException e) {
            // Deno cannot be started right now: requests start their own runner and report why
        }
        lock.lock();
        try {
            starting--;
            if (runner == null) {
                return;
            }
            if (closed) {
                runner.kill();
                return;
            }
            idle.addLast(runner);
            idleAdded.signalAll();
        } finally {
            lock.unlock();
        }
        Runner started = runner;
        started.process().onExit().thenRun(() -> replaceIfIdle(started));
    }

    private void replaceIfIdle(Runner runner) {
        boolean wasIdle;
        boolean replace;
        lock.lock();
        try {
            wasIdle = idle.remove(runner);
            if (wasIdle && runner.age().compareTo(EARLY_DEATH) < 0) {
                earlyDeaths++;
            } else if (wasIdle) {
                earlyDeaths = 0;
            }
            // runners that keep dying as soon as they start are not restarted in a loop: the
            // next request starts its own, which reports what is wrong with Deno
            replace = wasIdle && earlyDeaths <= MAX_EARLY_DEATHS;
        } finally {
            lock.unlock();
        }
        if (!wasIdle) {
            // it ran a request: the run ends it and reads its last output
            return;
        }
        runner.kill();
        if (replace) {
            fill();
        }
    }

    /** Waits until this many runners wait for work; for tests. */
    boolean awaitIdle(int count, Duration timeout) throws InterruptedException {
        long remaining = timeout.toNanos();
        lock.lock();
        try {
            while (idle.size() < count && !closed) {
                if (remaining <= 0) {
                    return false;
                }
                remaining = idleAdded.awaitNanos(remaining);
            }
            return idle.size() >= count;
        } finally {
            lock.unlock();
        }
    }

    List<Runner> idleRunners() {
        lock.lock();
        try {
            return new ArrayList<>(idle);
        } finally {
            lock.unlock();
        }
    }

    /** Ends every waiting runner and starts no more. */
    @Override
    public void close() {
        List<Runner> waiting;
        lock.lock();
        try {
            closed = true;
            waiting = new ArrayList<>(idle);
            idle.clear();
            idleAdded.signalAll();
        } finally {
            lock.unlock();
        }
        starter.shutdown();
        for (Runner runner : waiting) {
            runner.kill();
        }
        try {
            starter.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
