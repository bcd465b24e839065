package dev.execache.core;

/** Makes the cache key of a tool call. Keys of one tool must all match {@link #pattern} of that tool. */
public interface ToolCallKeyGenerator {
    ToolCallKeyGenerator DEFAULT = CacheKeys::forToolCall;

    /**
     * @param tool the tool name
     * @param canonicalArgs the arguments as canonical JSON
     * @param toolVersion the tool's version, null if unknown; for a call made as a person
     *     ({@link ToolCallRequest#person}), followed by a line naming them
     */
    String key(String tool, String canonicalArgs, String toolVersion);

    /** A key glob matching the keys of every tool that {@code toolGlob} matches. */
    default String pattern(String toolGlob) {
        return CacheKeys.toolCallPattern(toolGlob);
    }
}
