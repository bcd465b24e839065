package dev.execache.cli.archfixture;

import dev.execache.mcp.server.protocol.StatelessProtocol;

/** app-cli reaching into the MCP server's request path instead of starting a server: the rule must catch it. */
public final class CliUsingTheRequestPath {
    public Class<?> path = StatelessProtocol.class;
}
