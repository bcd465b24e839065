package dev.execache.core;

/**
 * Entries removed because a tool changed.
 *
 * @param tool the tool
 * @param oldVersion the version the store saw last, null if unknown
 * @param newVersion the current version
 * @param removed how many entries depended on it and were removed
 */
public record Invalidation(String tool, String oldVersion, String newVersion, int removed) {
    @Override
    public String toString() {
        return "tool " + tool + " changed (" + (oldVersion == null ? "?" : oldVersion) + " -> " + newVersion
                + "): removed " + removed + (removed == 1 ? " entry" : " entries");
    }
}
