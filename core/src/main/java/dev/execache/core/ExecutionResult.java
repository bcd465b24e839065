package dev.execache.core;

import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * What a run produced: either a value (JSON text) or an error, plus console output and
 * how long it took.
 *
 * @param nondeterminism the sources of non-determinism the code used ({@code Date.now},
 *     {@code Math.random}, ...); empty when it used none the sandbox can see
 */
public record ExecutionResult(String value, String console, Duration executionTime, ExecutionError error,
        Set<String> nondeterminism) {

    public ExecutionResult {
        console = console == null ? "" : console;
        nondeterminism = nondeterminism == null ? Set.of() : Set.copyOf(new TreeSet<>(nondeterminism));
        Objects.requireNonNull(executionTime, "executionTime must not be null");
        if ((value == null) == (error == null)) {
            throw new IllegalArgumentException("exactly one of value and error must be set");
        }
    }

    public ExecutionResult(String value, String console, Duration executionTime, ExecutionError error) {
        this(value, console, executionTime, error, Set.of());
    }

    public static ExecutionResult success(String value, String console, Duration executionTime) {
        return new ExecutionResult(value, console, executionTime, null);
    }

    public static ExecutionResult failure(ExecutionError error, String console, Duration executionTime) {
        return new ExecutionResult(null, console, executionTime, error);
    }

    public ExecutionResult withNondeterminism(Set<String> sources) {
        return new ExecutionResult(value, console, executionTime, error, sources);
    }

    public boolean isSuccess() {
        return error == null;
    }
}
