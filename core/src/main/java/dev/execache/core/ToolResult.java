package dev.execache.core;

import java.util.Objects;

/**
 * What a tool answered: from a server to the cache, and from the cache to code that called it
 * (one type for both, so that an answer crosses the bridge as it was cached).
 *
 * @param json the answer as JSON text; when {@code isError}, the error as the tool gave it (a
 *     server's result, or for code the message its {@code Error} gets)
 * @param isError whether the tool reported a failure; failures are never cached
 * @param hint what the server said about caching it ({@link CacheHint#NONE}: nothing)
 */
public record ToolResult(String json, boolean isError, CacheHint hint) {
    public ToolResult {
        Objects.requireNonNull(json, "json must not be null");
        hint = hint == null ? CacheHint.NONE : hint;
    }

    public ToolResult(String json, boolean isError) {
        this(json, isError, CacheHint.NONE);
    }

    public ToolResult withHint(CacheHint newHint) {
        return new ToolResult(json, isError, newHint);
    }

    public static ToolResult ok(String json) {
        return new ToolResult(json, false);
    }

    public static ToolResult error(String json) {
        return new ToolResult(json, true);
    }
}
