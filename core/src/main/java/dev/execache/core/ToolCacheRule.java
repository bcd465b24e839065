package dev.execache.core;

import java.time.Duration;
import java.util.Objects;

/**
 * How calls of the tools whose name matches {@code tools} are cached.
 *
 * <p>A mutating tool ({@link CachedTool#MUTATING_TOOLS}) is cached only by an enabled rule
 * that names it exactly, without wildcards: a broad rule such as {@code *} never turns on
 * caching of {@code bash}.
 *
 * @param measured whether the tools are cached only while they answer slower than
 *     {@link CachedTool.Builder#cacheWhenSlowerThan} (the default rule, a server's own TTL); a rule a
 *     person wrote for tools caches them however fast they answer
 * @param validator the cheap call that revalidates an expired answer instead of asking the tool again;
 *     null for none
 */
public record ToolCacheRule(Glob tools, boolean enabled, Duration ttl, int maxEntries, boolean measured,
        ToolValidator validator) {
    public ToolCacheRule {
        Objects.requireNonNull(tools, "tools must not be null");
        String toolGlob = tools.toString();
        Objects.requireNonNull(ttl, "ttl must not be null (rule " + toolGlob + ")");
        if (ttl.isZero() || ttl.isNegative()) {
            throw new IllegalArgumentException("ttl must be positive (rule " + toolGlob + "): " + ttl);
        }
        if (maxEntries < 1) {
            throw new IllegalArgumentException("maxEntries must be at least 1 (rule " + toolGlob + "): " + maxEntries);
        }
    }

    public ToolCacheRule(Glob tools, boolean enabled, Duration ttl, int maxEntries, boolean measured) {
        this(tools, enabled, ttl, maxEntries, measured, null);
    }

    public ToolCacheRule(Glob tools, boolean enabled, Duration ttl, int maxEntries) {
        this(tools, enabled, ttl, maxEntries, false);
    }

    /** @throws IllegalArgumentException if {@code toolGlob} is blank, or ttl or maxEntries out of range */
    public ToolCacheRule(String toolGlob, boolean enabled, Duration ttl, int maxEntries) {
        this(Glob.of(toolGlob), enabled, ttl, maxEntries, false);
    }

    /** This rule, cached only while its tools answer slower than the threshold when {@code measuredNow}. */
    public ToolCacheRule measured(boolean measuredNow) {
        return new ToolCacheRule(tools, enabled, ttl, maxEntries, measuredNow, validator);
    }

    /** This rule, its expired answers revalidated by {@code check} (null: none). */
    public ToolCacheRule validatedBy(ToolValidator check) {
        return new ToolCacheRule(tools, enabled, ttl, maxEntries, measured, check);
    }

    /** The glob as written. */
    public String toolGlob() {
        return tools.toString();
    }

    public static ToolCacheRule cache(String toolGlob, Duration ttl, int maxEntries) {
        return new ToolCacheRule(toolGlob, true, ttl, maxEntries);
    }

    public static ToolCacheRule never(String toolGlob) {
        return new ToolCacheRule(toolGlob, false, CachePolicy.DEFAULT_TTL, 1);
    }

    boolean namesExactly(String tool) {
        return toolGlob().equals(tool);
    }
}
