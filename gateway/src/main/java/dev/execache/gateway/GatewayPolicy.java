package dev.execache.gateway;

import dev.execache.core.ToolCacheRule;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * How the gateway treats its downstream servers' tool calls: the rules (globs on
 * {@code SERVER__TOOL}, first match wins), per server what a call that may write does to its
 * cached reads, whether code may call its tools and whether and how long its answers are cached,
 * and below what answer time a tool no rule names is not worth caching.
 *
 * @param cacheWhenSlowerThan a tool no rule names is cached only while the fastest of its recent
 *     calls is at least this; zero caches it however fast it answers
 */
public record GatewayPolicy(List<Server> servers, List<ToolCacheRule> rules, Duration cacheWhenSlowerThan) {
    /**
     * The default threshold: a hit answered through serve costs its caller about a millisecond
     * end to end, so a tool that answers in less than a few saves its caller almost nothing by being
     * cached and risks a stale answer (figures in docs/incoming-fresh.md).
     */
    public static final Duration DEFAULT_CACHE_WHEN_SLOWER_THAN = Duration.ofMillis(5);

    public GatewayPolicy {
        servers = List.copyOf(servers);
        rules = List.copyOf(rules);
        Objects.requireNonNull(cacheWhenSlowerThan, "cacheWhenSlowerThan must not be null");
        if (cacheWhenSlowerThan.isNegative()) {
            throw new IllegalArgumentException("cacheWhenSlowerThan must not be negative: " + cacheWhenSlowerThan);
        }
    }

    public GatewayPolicy(List<Server> servers, List<ToolCacheRule> rules) {
        this(servers, rules, DEFAULT_CACHE_WHEN_SLOWER_THAN);
    }

    /**
     * @param invalidateOnWrite whether a call that may write removes the server's cached reads
     * @param codeAccess whether code may call the server's tools as {@code tools.SERVER.TOOL(args)}
     * @param prefixed whether its tools are offered as {@code SERVER__TOOL} (else under their own names, for a host
     *     or a test that expects them; cache keys, rules and inspect_tool_call still use {@code SERVER__TOOL})
     * @param cache whether its tools' answers may be cached at all (a rule that names a tool still decides for it)
     * @param ttl how long its tools' answers are kept when no rule names them; null for the cache's TTL
     */
    public record Server(String name, boolean invalidateOnWrite, boolean codeAccess, boolean prefixed, boolean cache,
            Duration ttl) {
        public Server {
            Objects.requireNonNull(name, "name must not be null");
            if (ttl != null && (ttl.isZero() || ttl.isNegative())) {
                throw new IllegalArgumentException("ttl of server " + name + " must be positive: " + ttl);
            }
        }

        public Server(String name, boolean invalidateOnWrite, boolean codeAccess, boolean prefixed) {
            this(name, invalidateOnWrite, codeAccess, prefixed, true, null);
        }

        public Server(String name, boolean invalidateOnWrite, boolean codeAccess) {
            this(name, invalidateOnWrite, codeAccess, true);
        }
    }
}
