package dev.execache.core;

import java.time.Duration;
import java.util.Objects;

/**
 * What a run produced: either a value (JSON text) or an error, plus console output and
 * how long it took.
 */
public record ExecutionResult(String value, String console, Duration executionTime, ExecutionError error) {

    public ExecutionResult {
        console = console == null ? "" : console;
        Objects.requireNonNull(executionTime, "executionTime must not be null");
        if ((value == null) == (error == null)) {
            throw new IllegalArgumentException("exactly one of value and error must be set");
        }
    }

    public static ExecutionResult success(String value, String console, Duration executionTime) {
        return new ExecutionResult(value, console, executionTime, null);
    }

    public static ExecutionResult failure(ExecutionError error, String console, Duration executionTime) {
        return new ExecutionResult(null, console, executionTime, error);
    }

    public boolean isSuccess() {
        return error == null;
    }
}
