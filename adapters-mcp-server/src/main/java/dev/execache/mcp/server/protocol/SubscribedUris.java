package dev.execache.mcp.server.protocol;

import dev.execache.gateway.Gateway;
import dev.execache.gateway.Json;

import io.modelcontextprotocol.spec.McpSchema;
import java.util.HashMap;
import java.util.Map;

/**
 * The resources agents subscribed to, counted by holder (a 2025 session, a {@code subscriptions/listen} stream): the
 * URI's server is asked to subscribe by the first holder and to unsubscribe when the last lets go, so that two agents
 * make one subscription at the server.
 */
public final class SubscribedUris {
    private static final System.Logger LOG = System.getLogger("dev.execache.mcp.server");

    private final Gateway gateway;
    /** Guarded by this. */
    private final Map<String, Integer> holders = new HashMap<>();

    public SubscribedUris(Gateway gateway) {
        this.gateway = gateway;
    }

    /** Asks the URI's server to subscribe when this is its first holder; a server's refusal is thrown. */
    public void hold(String uri) {
        boolean first;
        synchronized (this) {
            first = holders.merge(uri, 1, Integer::sum) == 1;
        }
        if (first) {
            try {
                gateway.features().answer(McpSchema.METHOD_RESOURCES_SUBSCRIBE, uriParams(uri), null);
            } catch (RuntimeException e) {
                synchronized (this) {
                    holders.computeIfPresent(uri, (key, count) -> count == 1 ? null : count - 1);
                }
                throw e;
            }
        }
    }

    /** One holder lets go: the URI's server is told when nobody holds it any more. */
    public void release(String uri) {
        boolean last;
        synchronized (this) {
            Integer left = holders.computeIfPresent(uri, (key, count) -> count == 1 ? null : count - 1);
            last = left == null;
        }
        if (last) {
            try {
                gateway.features().answer(McpSchema.METHOD_RESOURCES_UNSUBSCRIBE, uriParams(uri), null);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.DEBUG, "unsubscribing from " + uri + ": " + e.getMessage());
            }
        }
    }

    private static com.fasterxml.jackson.databind.node.ObjectNode uriParams(String uri) {
        com.fasterxml.jackson.databind.node.ObjectNode params = Json.MAPPER.createObjectNode();
        params.put("uri", uri);
        return params;
    }
}
