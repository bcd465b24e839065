package dev.execache.core;

/** Hits and misses of one tool, counted in this process. */
public record ToolStats(long hits, long misses) {
    public double hitRate() {
        long lookups = hits + misses;
        return lookups == 0 ? 0 : (double) hits / lookups;
    }
}
