package dev.execache.sandbox;

import dev.execache.core.ErrorType;
import dev.execache.core.ExecutionError;
import dev.execache.core.ExecutionRequest;
import dev.execache.core.ExecutionResult;
import dev.execache.core.spi.Sandbox;
import dev.execache.core.spi.CodeTools;
import dev.execache.core.spi.SandboxUnavailableException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Runs agent code (TypeScript or JavaScript, the body of an async function) in a Deno process
 * of its own, with every permission denied but reading the paths the request allows, under the
 * request's time, memory and output limits.
 *
 * <p>Read access follows links: the allowed paths reach Deno as real paths, and a request whose
 * allowed trees hold a symbolic link that leads out of them is refused with a
 * {@code PermissionError} before any code runs (see {@link ReadAccess}).
 *
 * <p>Each process runs one request and is then ended. With a warm pool (see
 * {@link DenoSandboxSettings#warmPoolSize()}) processes are started ahead of time and wait for
 * their request, which saves Deno's start-up; isolation, limits and errors are the same.
 *
 * <p>Deno is looked for when the first request comes, so a sandbox that only ever serves cache
 * hits never needs one. Safe for use from many threads; every run is independent of the others.
 * {@link #close()} ends every process the sandbox started, and so does the JVM's exit.
 */
public final class DenoSandbox implements Sandbox {
    private final DenoSandboxSettings settings;
    private final DenoLocator locator;
    private final ExecutorService io;
    private final Set<Runner> running = ConcurrentHashMap.newKeySet();
    private final AtomicLong warmRuns = new AtomicLong();
    private final Object startLock = new Object();
    private final Semaphore runSlots;
    private volatile DenoRuntime runtime;
    private volatile WarmPool pool;
    private volatile boolean closed;

    public DenoSandbox() {
        this(DenoSandboxSettings.defaults());
    }

    public DenoSandbox(DenoSandboxSettings settings) {
        this(settings, new DenoLocator(Objects.requireNonNull(settings, "settings must not be null")));
    }

    DenoSandbox(DenoSandboxSettings settings, DenoLocator locator) {
        this.settings = settings;
        this.locator = locator;
        this.io = Executors.newCachedThreadPool(daemonThreads());
        this.runSlots = new Semaphore(settings.maxConcurrentRuns(), true);
    }

    public DenoSandboxSettings settings() {
        return settings;
    }

    /**
     * @throws SandboxUnavailableException when no working Deno 2 can be found or installed
     * @throws IllegalArgumentException when a path the request allows to read holds a comma,
     *     which Deno cannot take, or lies in /proc
     * @throws IllegalStateException when the sandbox is closed
     * @throws java.util.concurrent.CancellationException when the calling thread is interrupted
     */
    /**
     * Runs the request; the code's {@code tools.SERVER.TOOL(args)} calls go to {@code tools}, on
     * the runner's authenticated channel, one at a time. They count against the run's timeout.
     */
    @Override
    public ExecutionResult execute(ExecutionRequest request, CodeTools tools) {
        Objects.requireNonNull(request, "request must not be null");
        Objects.requireNonNull(tools, "tools must not be null");
        ensureOpen();
        DenoRuntime deno = runtime();
        LaunchFlags flags = LaunchFlags.of(request.limits());
        try {
            runSlots.acquire();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CancellationException("interrupted while waiting for a free run slot");
        }
        try {
            return executeInSlot(request, tools, deno, flags);
        } finally {
            runSlots.release();
        }
    }

    private ExecutionResult executeInSlot(ExecutionRequest request, CodeTools tools, DenoRuntime deno,
            LaunchFlags flags) {
        // the time limit starts now: waiting for a slot is not the code's time
        long start = System.nanoTime();
        Optional<String> refused = ReadAccess.refusal(flags.allowRead());
        if (refused.isPresent()) {
            return ExecutionResult.failure(new ExecutionError(ErrorType.PERMISSION_ERROR, refused.get()), "",
                    Duration.ofNanos(System.nanoTime() - start));
        }
        WarmPool warm = pool;
        Runner runner = warm == null ? null : warm.take(flags);
        try {
            if (runner != null) {
                try {
                    ExecutionResult result = runOn(runner, request, tools, start);
                    warmRuns.incrementAndGet();
                    return result;
                } catch (SandboxUnavailableException e) {
                    // the waiting runner died before it took the request; a fresh one tells
                    // whether Deno itself is broken
                }
            }
            return runOn(Runner.start(deno, flags), request, tools, start);
        } finally {
            if (warm != null) {
                warm.refill();
            }
        }
    }

    private ExecutionResult runOn(Runner runner, ExecutionRequest request, CodeTools tools, long start) {
        // until its process is gone, not only until its result is in: close() waits for it
        running.add(runner);
        runner.process().onExit().thenRun(() -> running.remove(runner));
        if (closed) {
            runner.kill();
            throw new IllegalStateException("the sandbox is closed");
        }
        return runner.run(request, tools, io, start);
    }

    /**
     * Ends every Deno process this sandbox started, waiting runners and runs in progress, and
     * returns when they are gone.
     */
    @Override
    public void close() {
        synchronized (startLock) {
            closed = true;
        }
        WarmPool warm = pool;
        if (warm != null) {
            warm.close();
        }
        for (Runner runner : running) {
            runner.kill();
        }
        io.shutdown();
    }

    /** How many runs are going on now (at most {@link DenoSandboxSettings#maxConcurrentRuns()}). */
    int runsInProgress() {
        return settings.maxConcurrentRuns() - runSlots.availablePermits();
    }

    /** How many runs went to a runner from the warm pool. */
    long warmRuns() {
        return warmRuns.get();
    }

    WarmPool pool() {
        return pool;
    }

    /** Waits until the pool has a runner waiting; false when it has none by then or there is no pool. */
    boolean awaitWarmRunner(Duration timeout) throws InterruptedException {
        WarmPool warm = pool;
        return warm != null && warm.awaitIdle(1, timeout);
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("the sandbox is closed");
        }
    }

    private DenoRuntime runtime() {
        DenoRuntime current = runtime;
        if (current != null) {
            return current;
        }
        synchronized (startLock) {
            ensureOpen();
            if (runtime == null) {
                DenoRuntime located = DenoRuntime.prepare(locator.locate(), settings.cacheDirectory());
                if (settings.warmPoolSize() > 0) {
                    pool = new WarmPool(located, LaunchFlags.of(settings.warmPoolLimits()), settings.warmPoolSize());
                }
                runtime = located;
            }
            return runtime;
        }
    }

    private static ThreadFactory daemonThreads() {
        AtomicInteger count = new AtomicInteger();
        return task -> {
            Thread thread = new Thread(task, "execache-deno-io-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }
}
