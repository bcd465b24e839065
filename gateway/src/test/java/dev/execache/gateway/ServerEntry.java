package dev.execache.gateway;

import dev.execache.core.ToolCacheRule;
import dev.execache.tools.mcp.DownstreamSettings;
import java.util.List;

/**
 * A downstream server as a config file's {@code servers:} entry gives it: how to reach it, and
 * how the gateway treats its tools.
 */
record ServerEntry(DownstreamSettings settings, GatewayPolicy.Server policy) {
    /** A server whose tools code may call. */
    ServerEntry(DownstreamSettings settings, boolean invalidateOnWrite) {
        this(settings, invalidateOnWrite, true);
    }

    ServerEntry(DownstreamSettings settings, boolean invalidateOnWrite, boolean codeAccess) {
        this(settings, new GatewayPolicy.Server(settings.name(), invalidateOnWrite, codeAccess));
    }

    static List<DownstreamSettings> settings(List<ServerEntry> servers) {
        return servers.stream().map(ServerEntry::settings).toList();
    }

    /** The gateway's policy for these servers and rules: their read-only tools cached, as a remote server's are. */
    static GatewayPolicy policy(List<ServerEntry> servers, List<ToolCacheRule> rules) {
        return new GatewayPolicy(servers.stream().map(ServerEntry::policy).toList(), rules);
    }
}
