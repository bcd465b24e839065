package dev.execache.core;

import java.time.Duration;
import java.util.Objects;

/**
 * What a tool answered: from a server to the cache, and from the cache to code that called it
 * (one type for both, so that an answer crosses the bridge as it was cached).
 *
 * @param json the answer as JSON text; when {@code isError}, the error as the tool gave it (a
 *     server's result, or for code the message its {@code Error} gets)
 * @param isError whether the tool reported a failure; failures are never cached
 * @param hint what the server said about caching it ({@link CacheHint#NONE}: nothing)
 * @param maxAge the longest the server allows the answer to be kept (the {@code ttlMs} of an MCP 2026-07-28
 *     result): a stored answer expires no later than this after it was made, however long its rule's TTL;
 *     null when the server set no bound
 */
public record ToolResult(String json, boolean isError, CacheHint hint, Duration maxAge) {
    public ToolResult {
        Objects.requireNonNull(json, "json must not be null");
        hint = hint == null ? CacheHint.NONE : hint;
        if (maxAge != null && (maxAge.isZero() || maxAge.isNegative())) {
            throw new IllegalArgumentException("maxAge must be positive (an answer that may not be kept at all has the"
                    + " hint NO_CACHE): " + maxAge);
        }
    }

    public ToolResult(String json, boolean isError, CacheHint hint) {
        this(json, isError, hint, null);
    }

    public ToolResult(String json, boolean isError) {
        this(json, isError, CacheHint.NONE);
    }

    public ToolResult withHint(CacheHint newHint) {
        return new ToolResult(json, isError, newHint, maxAge);
    }

    /** This answer, kept at most {@code keptAtMost} when it is stored (see {@link #maxAge}). */
    public ToolResult withMaxAge(Duration keptAtMost) {
        return new ToolResult(json, isError, hint, keptAtMost);
    }

    public static ToolResult ok(String json) {
        return new ToolResult(json, false);
    }

    public static ToolResult error(String json) {
        return new ToolResult(json, true);
    }
}
