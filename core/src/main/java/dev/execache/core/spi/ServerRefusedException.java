package dev.execache.core.spi;

/** A server's error answer to a request (its JSON-RPC code and message), or why it could not be asked. */
public final class ServerRefusedException extends RuntimeException {
    private final int code;
    private final String data;

    public ServerRefusedException(int code, String message) {
        this(code, message, null);
    }

    /** @param data the error's data as JSON text, as the server gave it; null for none */
    public ServerRefusedException(int code, String message, String data) {
        super(message);
        this.code = code;
        this.data = data;
    }

    /** The error's data as JSON text, as the server gave it; null for none. */
    public String data() {
        return data;
    }

    /** The JSON-RPC error code, as the server gave it. */
    public int code() {
        return code;
    }
}
