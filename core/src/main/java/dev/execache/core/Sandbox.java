package dev.execache.core;

/** Runs one piece of code under limits. */
public interface Sandbox extends AutoCloseable {

    /**
     * Runs the request. Whatever the code itself does (throw, loop, allocate, print, ask for
     * a permission) comes back as a result with an {@link ExecutionError}; this never throws
     * for it.
     *
     * @throws SandboxUnavailableException when the sandbox itself cannot run anything
     */
    ExecutionResult execute(ExecutionRequest request);

    @Override
    default void close() {
    }
}
