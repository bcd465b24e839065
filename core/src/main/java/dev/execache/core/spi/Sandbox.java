package dev.execache.core.spi;

import dev.execache.core.ExecutionRequest;
import dev.execache.core.ExecutionResult;

/** Runs one piece of code under limits. */
public interface Sandbox extends AutoCloseable {

    /**
     * Runs the request. Whatever the code itself does (throw, loop, allocate, print, ask for
     * a permission) comes back as a result with an {@link dev.execache.core.ExecutionError}; this never throws
     * for it.
     *
     * @throws SandboxUnavailableException when the sandbox itself cannot run anything
     */
    default ExecutionResult execute(ExecutionRequest request) {
        return execute(request, CodeTools.NONE);
    }

    /**
     * Runs the request with tools the code may call ({@code tools.SERVER.TOOL(args)}); each call
     * goes to {@code tools} and its answer back to the code. The one method to implement, so a
     * sandbox that wraps another cannot drop the tools by forgetting an overload.
     *
     * @throws SandboxUnavailableException when the sandbox itself cannot run anything
     */
    ExecutionResult execute(ExecutionRequest request, CodeTools tools);

    @Override
    default void close() {
    }
}
