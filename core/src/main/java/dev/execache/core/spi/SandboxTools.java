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
     * a failure is an error answer.
     *
     * @param argumentsJson the arguments as the code gave them, as JSON text
     */
    ToolAnswer call(String server, String tool, String argumentsJson);
}
