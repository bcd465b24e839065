package dev.execache.cli;

/** Something execache needs is not there (Deno, a required store): exit code 3, with this message. */
final class InfrastructureException extends RuntimeException {
    InfrastructureException(String message, Throwable cause) {
        super(message, cause);
    }
}
