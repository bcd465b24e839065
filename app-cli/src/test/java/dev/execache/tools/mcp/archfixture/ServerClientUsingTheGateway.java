package dev.execache.tools.mcp.archfixture;

import dev.execache.gateway.Gateway;

/** A driven adapter reaching up to the gateway: the rule must catch it. */
public final class ServerClientUsingTheGateway {
    public Class<?> gateway = Gateway.class;
}
