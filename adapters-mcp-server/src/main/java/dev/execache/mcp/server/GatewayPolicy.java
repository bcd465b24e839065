package dev.execache.mcp.server;

import dev.execache.core.ToolCacheRule;
import java.util.List;
import java.util.Objects;

/**
 * How the gateway treats its downstream servers' tool calls: the rules (globs on
 * {@code SERVER__TOOL}, first match wins) and, per server, what a call that may write does to its
 * cached reads and whether code may call its tools.
 */
public record GatewayPolicy(List<Server> servers, List<ToolCacheRule> rules) {
    public GatewayPolicy {
        servers = List.copyOf(servers);
        rules = List.copyOf(rules);
    }

    /**
     * @param invalidateOnWrite whether a call that may write removes the server's cached reads
     * @param codeAccess whether code may call the server's tools as {@code tools.SERVER.TOOL(args)}
     * @param prefixed whether its tools are offered as {@code SERVER__TOOL} (else under their own names, for a host
     *     or a test that expects them; cache keys, rules and inspect_tool_call still use {@code SERVER__TOOL})
     */
    public record Server(String name, boolean invalidateOnWrite, boolean codeAccess, boolean prefixed) {
        public Server {
            Objects.requireNonNull(name, "name must not be null");
        }

        public Server(String name, boolean invalidateOnWrite, boolean codeAccess) {
            this(name, invalidateOnWrite, codeAccess, true);
        }
    }
}
