package dev.execache.core;

import dev.execache.core.spi.Sandbox;
import dev.execache.core.spi.CodeTools;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/** A {@link Sandbox} double that answers from a script and counts executions. */
public final class ScriptedSandbox implements Sandbox {
    private final AtomicInteger executions = new AtomicInteger();
    private volatile Function<ExecutionRequest, ExecutionResult> script;

    public ScriptedSandbox(Function<ExecutionRequest, ExecutionResult> script) {
        this.script = script;
    }

    /** Answers every request with its code as a JSON string, taking 250 ms. */
    public static ScriptedSandbox echo() {
        return new ScriptedSandbox(request -> ExecutionResult.success(
                CanonicalJson.write(request.code(), "code"), "ran", Duration.ofMillis(250)));
    }

    public void answer(Function<ExecutionRequest, ExecutionResult> newScript) {
        this.script = newScript;
    }

    public int executions() {
        return executions.get();
    }

    @Override
    public ExecutionResult execute(ExecutionRequest request, CodeTools tools) {
        executions.incrementAndGet();
        return script.apply(request);
    }
}
