package dev.execache.cli.settings;

/** The user asked for something that cannot be done as asked: exit code 2, with this message. */
public final class UsageException extends RuntimeException {
    public UsageException(String message) {
        super(message);
    }

    public UsageException(String message, Throwable cause) {
        super(message, cause);
    }
}
