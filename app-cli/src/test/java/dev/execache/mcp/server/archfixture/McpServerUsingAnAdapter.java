package dev.execache.mcp.server.archfixture;

import dev.execache.store.memory.MemoryCacheStore;

/** The MCP server reaching a store adapter instead of core's port: the MCP server rule must catch it. */
public final class McpServerUsingAnAdapter {
    public Class<?> store = MemoryCacheStore.class;
}
