package dev.execache.core;

import java.util.Objects;

/**
 * A structured failure of a run.
 *
 * @param type what kind of failure
 * @param message what went wrong, free of host paths
 * @param stack the code's stack trace, free of host paths; empty when there is none
 * @param line 1-based line in the code, or 0 when unknown
 * @param column 1-based column in the code, or 0 when unknown
 */
public record ExecutionError(ErrorType type, String message, String stack, int line, int column) {

    public ExecutionError {
        Objects.requireNonNull(type, "type must not be null");
        message = message == null ? "" : message;
        stack = stack == null ? "" : stack;
        if (line < 0 || column < 0) {
            throw new IllegalArgumentException("line and column must not be negative: " + line + ":" + column);
        }
    }

    public ExecutionError(ErrorType type, String message) {
        this(type, message, "", 0, 0);
    }

    /**
     * One line for a person: {@code Error: no orders in context (line 3, column 9)}. What the code threw already reads
     * as JavaScript prints it (its name, then its message), so a runtime error carries no second name in front.
     */
    @Override
    public String toString() {
        String where = line > 0 ? " (line " + line + ", column " + column + ")" : "";
        return (type == ErrorType.RUNTIME_ERROR ? "" : type.displayName() + ": ") + message + where;
    }
}
