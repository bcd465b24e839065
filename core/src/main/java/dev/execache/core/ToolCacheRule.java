package dev.execache.core;

import java.time.Duration;
import java.util.Objects;

/**
 * How calls of the tools whose name matches {@code tools} are cached. Made by {@link #cache} or
 * {@link #never}, and changed by the methods that return a rule like this one but for one component
 * ({@link #enabled}, {@link #validatedBy}); every rule is checked when it is made.
 *
 * <p>A mutating tool ({@link CachedTool#MUTATING_TOOLS}) is cached only by an enabled rule
 * that names it exactly, without wildcards: a broad rule such as {@code *} never turns on
 * caching of {@code bash}.
 *
 * @param validator the cheap call that revalidates an expired answer instead of asking the tool again;
 *     null for none
 */
public record ToolCacheRule(Glob tools, boolean enabled, Duration ttl, int maxEntries, ToolValidator validator) {
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

    /**
     * A rule that caches calls of the tools matching {@code toolGlob} for {@code ttl}, at most
     * {@code maxEntries} of them; no validator.
     *
     * @throws IllegalArgumentException if {@code toolGlob} is blank, or ttl or maxEntries out of range
     */
    public static ToolCacheRule cache(String toolGlob, Duration ttl, int maxEntries) {
        return new ToolCacheRule(Glob.of(toolGlob), true, ttl, maxEntries, null);
    }

    /** A rule that never caches calls of the tools matching {@code toolGlob}. */
    public static ToolCacheRule never(String toolGlob) {
        return cache(toolGlob, CachePolicy.DEFAULT_TTL, 1).enabled(false);
    }

    /** This rule, caching its tools' calls when {@code enabledNow} and never otherwise. */
    public ToolCacheRule enabled(boolean enabledNow) {
        return new ToolCacheRule(tools, enabledNow, ttl, maxEntries, validator);
    }

    /** This rule, its expired answers revalidated by {@code check} (null: none). */
    public ToolCacheRule validatedBy(ToolValidator check) {
        return new ToolCacheRule(tools, enabled, ttl, maxEntries, check);
    }

    /** The glob as written. */
    public String toolGlob() {
        return tools.toString();
    }

    boolean namesExactly(String tool) {
        return toolGlob().equals(tool);
    }
}
