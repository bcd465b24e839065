package dev.execache.core.spi;

import dev.execache.core.ToolResult;
import java.util.List;
import java.util.Map;

/**
 * Tools discovered somewhere else (the agent's other MCP servers): what each one is, its
 * version (a digest of its definition), and a way to call it. It feeds a
 * {@link ToolVersionSource}: a tool whose digest changed has changed.
 */
public interface ToolCatalog extends AutoCloseable {

    /** Every tool discovered so far, in a stable order. */
    List<CatalogTool> tools();

    /**
     * Calls a discovered tool by its catalog name. Never throws for what the tool or its server
     * does: a failure, a dead server or a timeout is an error result. When the calling thread is
     * interrupted, the call is cancelled (on the server too, if it was sent) and this throws a
     * {@link ToolCallCancelledException}.
     */
    ToolResult call(String tool, Map<String, Object> args);

    /** Asks to be told when the discovered tools change (added, removed, or a new digest). */
    void addListener(Listener listener);

    @Override
    void close();

    @FunctionalInterface
    interface Listener {
        /** @param tools every tool discovered now */
        void toolsChanged(List<CatalogTool> tools);
    }
}
