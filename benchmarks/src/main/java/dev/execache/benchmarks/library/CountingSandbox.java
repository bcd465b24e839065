package dev.execache.benchmarks.library;

import dev.execache.core.ExecutionRequest;
import dev.execache.core.ExecutionResult;
import dev.execache.core.spi.CodeTools;
import dev.execache.core.spi.Sandbox;
import java.util.concurrent.atomic.AtomicInteger;

/** Counts the executions that reach the sandbox it wraps (which its owner closes). */
final class CountingSandbox implements Sandbox {
    private final Sandbox delegate;
    private final AtomicInteger executions = new AtomicInteger();

    CountingSandbox(Sandbox delegate) {
        this.delegate = delegate;
    }

    @Override
    public ExecutionResult execute(ExecutionRequest request, CodeTools tools) {
        executions.incrementAndGet();
        return delegate.execute(request, tools);
    }

    int executions() {
        return executions.get();
    }
}
