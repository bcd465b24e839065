package dev.execache.mcp.server.archfixture;

/** The MCP server reaching a store adapter instead of core's port: the MCP server rule must catch it. */
public final class McpServerUsingAnAdapter {
    public Class<?> store = dev.execache.store.memory.MemoryCacheStore.class;
}
