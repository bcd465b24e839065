package dev.execache.core.spi;

/** A server's error answer to a request (its JSON-RPC code and message), or why it could not be asked. */
public final class ServerRefusedException extends RuntimeException {
    private final int code;

    public ServerRefusedException(int code, String message) {
        super(message);
        this.code = code;
    }

    /** The JSON-RPC error code, as the server gave it. */
    public int code() {
        return code;
    }
}
