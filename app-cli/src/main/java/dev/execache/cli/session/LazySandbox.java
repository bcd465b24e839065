package dev.execache.cli.session;

import dev.execache.core.ExecutionRequest;
import dev.execache.core.ExecutionResult;
import dev.execache.core.spi.Sandbox;
import dev.execache.core.spi.CodeTools;
import jakarta.inject.Provider;

/** Starts the real sandbox on the first execution, and closes it only if it was started. */
final class LazySandbox implements Sandbox {
    private final Provider<Sandbox> sandboxes;
    private volatile Sandbox started;
    private boolean closed;

    LazySandbox(Provider<Sandbox> sandboxes) {
        this.sandboxes = sandboxes;
    }

    @Override
    public ExecutionResult execute(ExecutionRequest request, CodeTools tools) {
        return start().execute(request, tools);
    }

    /** Starts the real sandbox now, if it is not started yet. */
    Sandbox start() {
        Sandbox sandbox = started;
        if (sandbox == null) {
            synchronized (this) {
                if (closed) {
                    throw new IllegalStateException("the sandbox is closed");
                }
                if (started == null) {
                    started = sandboxes.get();
                }
                sandbox = started;
            }
        }
        return sandbox;
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (started != null) {
            started.close();
        }
    }
}
