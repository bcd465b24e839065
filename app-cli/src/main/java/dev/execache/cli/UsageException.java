package dev.execache.cli;

/** The user asked for something that cannot be done as asked: exit code 2, with this message. */
final class UsageException extends RuntimeException {
    UsageException(String message) {
        super(message);
    }

    UsageException(String message, Throwable cause) {
        super(message, cause);
    }
}
