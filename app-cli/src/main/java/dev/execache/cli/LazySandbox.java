package dev.execache.cli;

import dev.execache.core.ExecutionRequest;
import dev.execache.core.ExecutionResult;
import dev.execache.core.Sandbox;
import jakarta.inject.Provider;

/** Starts the real sandbox on the first execution, and closes it only if it was started. */
final class LazySandbox implements Sandbox {
    private final Provider<Sandbox> sandboxes;
    private volatile Sandbox started;

    LazySandbox(Provider<Sandbox> sandboxes) {
        this.sandboxes = sandboxes;
    }

    @Override
    public ExecutionResult execute(ExecutionRequest request) {
        Sandbox sandbox = started;
        if (sandbox == null) {
            synchronized (this) {
                if (started == null) {
                    started = sandboxes.get();
                }
                sandbox = started;
            }
        }
        return sandbox.execute(request);
    }

    @Override
    public synchronized void close() {
        if (started != null) {
            started.close();
        }
    }
}
