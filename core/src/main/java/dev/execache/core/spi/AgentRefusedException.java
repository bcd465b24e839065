package dev.execache.core.spi;

/**
 * The agent's error answer to a request a server made of it through execache (sampling, elicitation, roots), with
 * its JSON-RPC code and message, or why no agent could be asked.
 */
public final class AgentRefusedException extends RuntimeException {
    private final int code;

    public AgentRefusedException(int code, String message) {
        super(message);
        this.code = code;
    }

    /** The JSON-RPC error code, as the agent gave it (or -32601 when no agent can be asked). */
    public int code() {
        return code;
    }
}
