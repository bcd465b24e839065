package dev.execache.gateway.archfixture;

import dev.execache.mcp.server.http.McpHttpServer;

/** The gateway reaching a transport: the gateway rules must catch it. */
public final class GatewayUsingATransport {
    public Class<?> transport = McpHttpServer.class;
}
