package dev.execache.sandbox;

import dev.execache.core.ExecutionRequest;
import dev.execache.core.ExecutionResult;
import dev.execache.core.Sandbox;
import dev.execache.core.SandboxUnavailableException;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs agent code (TypeScript or JavaScript, the body of an async function) in a fresh Deno
 * process per run, with every permission denied but reading the paths the request allows,
 * under the request's time, memory and output limits.
 *
 * <p>Deno is looked for when the first request comes (see {@link DenoSandboxSettings}), so a
 * sandbox that only ever serves cache hits never needs one. Safe for use from many threads;
 * every run is independent of the others.
 */
public final class DenoSandbox implements Sandbox {
    private final DenoSandboxSettings settings;
    private final DenoLocator locator;
    private final ExecutorService io;
    private final Set<Runner> running = ConcurrentHashMap.newKeySet();
    private final Object runtimeLock = new Object();
    private volatile DenoRuntime runtime;
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
    }

    public DenoSandboxSettings settings() {
        return settings;
    }

    /**
     * @throws SandboxUnavailableException when no working Deno 2 can be found or installed
     * @throws IllegalStateException when the sandbox is closed
     */
    @Override
    public ExecutionResult execute(ExecutionRequest request) {
        Objects.requireNonNull(request, "request must not be null");
        if (closed) {
            throw new IllegalStateException("the sandbox is closed");
        }
        DenoRuntime deno = runtime();
        LaunchFlags flags = LaunchFlags.of(request.limits());
        long start = System.nanoTime();
        Runner runner = Runner.start(deno, flags);
        running.add(runner);
        try {
            if (closed) {
                runner.kill();
                throw new IllegalStateException("the sandbox is closed");
            }
            return runner.run(request, io, start);
        } finally {
            running.remove(runner);
        }
    }

    /** Ends every Deno process this sandbox started that is still running. */
    @Override
    public void close() {
        closed = true;
        for (Runner runner : running) {
            runner.kill();
        }
        io.shutdown();
    }

    private DenoRuntime runtime() {
        DenoRuntime current = runtime;
        if (current != null) {
            return current;
        }
        synchronized (runtimeLock) {
            if (runtime == null) {
                runtime = DenoRuntime.prepare(locator.locate(), settings.cacheDirectory());
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
