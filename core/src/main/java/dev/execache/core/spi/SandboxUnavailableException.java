package dev.execache.core.spi;

/** The sandbox cannot run code at all (its runtime is missing or broken); says how to fix it. */
public class SandboxUnavailableException extends RuntimeException {
    public SandboxUnavailableException(String message) {
        super(message);
    }

    public SandboxUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
