package dev.execache.gateway;

import dev.execache.core.Agents;
import dev.execache.core.spi.ToolCatalog;

/**
 * Who makes a tool call: the agent, as its transport authenticated or named it, and the call's JSON-RPC id (so that a
 * cancel finds it). The transport passes it beside the request; nothing a client writes in its {@code _meta} becomes
 * one, so a client cannot name another agent.
 *
 * @param agent the agent's name ({@code unknown} when the transport knows none)
 * @param requestId the call's JSON-RPC id; null when it has none to cancel by
 * @param person the person the transport authenticated (an OAuth access token's subject and the token), whom a
 *     server reached as each caller's person is reached as; null: none
 */
public record RequestOrigin(String agent, Object requestId, ToolCatalog.Person person) {
    /** A call whose agent and id nobody knows. */
    public static final RequestOrigin UNKNOWN = new RequestOrigin(null, null);

    public RequestOrigin {
        agent = Agents.firstOf(agent);
    }

    /** A call made for no person in particular. */
    public RequestOrigin(String agent, Object requestId) {
        this(agent, requestId, null);
    }
}
