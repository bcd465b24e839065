package dev.execache.core;

import java.time.Duration;
import java.util.Objects;

/**
 * How calls of the tools whose name matches {@code toolGlob} are cached.
 *
 * <p>A mutating tool ({@link CachedTool#MUTATING_TOOLS}) is cached only by an enabled rule
 * that names it exactly, without wildcards: a broad rule such as {@code *} never turns on
 * caching of {@code bash}.
 */
public record ToolCacheRule(String toolGlob, boolean enabled, Duration ttl, int maxEntries) {
    public ToolCacheRule {
        Glob.of(toolGlob);
        Objects.requireNonNull(ttl, "ttl must not be null (rule " + toolGlob + ")");
        if (ttl.isZero() || ttl.isNegative()) {
            throw new IllegalArgumentException("ttl must be positive (rule " + toolGlob + "): " + ttl);
        }
        if (maxEntries < 1) {
            throw new IllegalArgumentException("maxEntries must be at least 1 (rule " + toolGlob + "): " + maxEntries);
        }
    }

    public static ToolCacheRule cache(String toolGlob, Duration ttl, int maxEntries) {
        return new ToolCacheRule(toolGlob, true, ttl, maxEntries);
    }

    public static ToolCacheRule never(String toolGlob) {
        return new ToolCacheRule(toolGlob, false, CachePolicy.DEFAULT_TTL, 1);
    }

    boolean namesExactly(String tool) {
        return toolGlob.equals(tool);
    }
}
