package dev.execache.core;

import java.util.Objects;

/**
 * What a tool answered.
 *
 * @param json the answer as JSON text
 * @param isError whether the tool reported a failure; failures are never cached
 */
public record ToolResult(String json, boolean isError) {
    public ToolResult {
        Objects.requireNonNull(json, "json must not be null");
    }

    public static ToolResult ok(String json) {
        return new ToolResult(json, false);
    }

    public static ToolResult error(String json) {
        return new ToolResult(json, true);
    }
}
