package dev.execache.core.spi;

import java.util.List;
import java.util.Map;

/**
 * The tools the code of one run may call, as the {@link Sandbox} sees them: names, and a way
 * to call one. Core hands each run its own (see {@link CachedExecutor}), so the sandbox knows
 * nothing of caching or of where the tools come from.
 */
public interface SandboxTools {
    /** No tools: the code's {@code tools} object is empty. */
    SandboxTools NONE = new SandboxTools() {
        @Override
        public Map<String, List<String>> reachable() {
            return Map.of();
        }

        @Override
        public ToolAnswer call(String server, String tool, String argumentsJson) {
            return ToolAnswer.error("no tools are reachable from code");
        }
    };

    /** Each server's name and the names of its tools the code may call ({@code tools.SERVER.TOOL}). */
    Map<String, List<String>> reachable();

    /**
     * Calls one tool for the code and waits for its answer. Never throws for what the tool does:
     * a failure is an error answer. When the run ends while the call is in flight, the sandbox
     * interrupts the thread that made it: the call then gives up at once, cancels what it asked
     * for, and throws a {@link java.util.concurrent.CancellationException} (a
     * {@link ToolCallCancelledException} when it knows whether the tool was reached).
     *
     * @param argumentsJson the arguments as the code gave them, as JSON text
     */
    ToolAnswer call(String server, String tool, String argumentsJson);
}
