package dev.execache.core;

import java.util.Set;
import java.util.TreeSet;

/** A request declared a tool whose version nobody knows: the request is wrong, not the store or the sandbox. */
public final class UnknownToolException extends IllegalArgumentException {
    private final String tool;

    public UnknownToolException(String tool, Set<String> known) {
        super("unknown tool '" + tool + "': give its version (known tools: "
                + (known.isEmpty() ? "none" : String.join(", ", new TreeSet<>(known))) + ")");
        this.tool = tool;
    }

    /** The tool the request named. */
    public String tool() {
        return tool;
    }
}
