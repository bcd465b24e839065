package dev.execache.cli.session;

/** Something execache needs is not there (Deno, a required store): exit code 3, with this message. */
public final class InfrastructureException extends RuntimeException {
    public InfrastructureException(String message, Throwable cause) {
        super(message, cause);
    }
}
