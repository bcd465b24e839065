package dev.execache.core;

import java.util.Objects;

/**
 * What a tool answered: from a server to the cache, and from the cache to code that called it
 * (one type for both, so that an answer crosses the bridge as it was cached).
 *
 * @param json the answer as JSON text; when {@code isError}, the error as the tool gave it (a
 *     server's result, or for code the message its {@code Error} gets)
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
