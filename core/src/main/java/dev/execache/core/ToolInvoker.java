package dev.execache.core;

import java.util.Map;

/** Calls an agent tool by name with JSON-like arguments. */
@FunctionalInterface
public interface ToolInvoker {
    ToolResult invoke(String tool, Map<String, Object> args);
}
