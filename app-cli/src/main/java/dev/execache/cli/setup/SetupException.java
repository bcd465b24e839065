package dev.execache.cli.setup;

/** Why setup stopped before writing anything, in words for a person (exit 2). */
public final class SetupException extends RuntimeException {
    public SetupException(String message) {
        super(message);
    }
}
