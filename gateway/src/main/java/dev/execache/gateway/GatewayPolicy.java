package dev.execache.gateway;

import dev.execache.core.ToolCacheRule;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * How the gateway treats its downstream servers' tool calls: the rules (globs on
 * {@code SERVER__TOOL}, first match wins), and per server what a call that may write does to its
 * cached reads, whether code may call its tools and whether and how long its answers are cached.
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
     * @param cache whether its tools' answers may be cached at all (a rule that names a tool still decides for it)
     * @param ttl how long its tools' answers are kept when no rule names them; null for the cache's TTL
     * @param readsFresh whether its read-only tools are asked every time unless a rule names them or its answers
     *     say {@code cache_hint: cache}: a local (command) server whose settings do not ask for its reads to be
     *     cached ({@code cache: true}, a {@code ttl}). The cache cannot see a file change on disk, and no timing
     *     tells a local read worth keeping from one that is not on a busy machine
     */
    public record Server(String name, boolean invalidateOnWrite, boolean codeAccess, boolean prefixed, boolean cache,
            Duration ttl, boolean readsFresh) {
        public Server {
            Objects.requireNonNull(name, "name must not be null");
            if (ttl != null && (ttl.isZero() || ttl.isNegative())) {
                throw new IllegalArgumentException("ttl of server " + name + " must be positive: " + ttl);
            }
        }

        public Server(String name, boolean invalidateOnWrite, boolean codeAccess, boolean prefixed, boolean cache,
                Duration ttl) {
            this(name, invalidateOnWrite, codeAccess, prefixed, cache, ttl, false);
        }

        public Server(String name, boolean invalidateOnWrite, boolean codeAccess, boolean prefixed) {
            this(name, invalidateOnWrite, codeAccess, prefixed, true, null);
        }

        public Server(String name, boolean invalidateOnWrite, boolean codeAccess) {
            this(name, invalidateOnWrite, codeAccess, true);
        }
    }
}
