package dev.execache.core;

/**
 * Entries removed because a tool changed.
 *
 * @param tool the tool
 * @param oldVersion the version the store saw last, null if unknown or the removal was asked for
 * @param newVersion the current version, null when the removal was asked for (no version changed)
 * @param removed how many entries depended on it and were removed
 */
public record Invalidation(String tool, String oldVersion, String newVersion, int removed) {
    @Override
    public String toString() {
        String entries = removed + (removed == 1 ? " entry" : " entries");
        if (newVersion == null) {
            return "tool " + tool + " invalidated on request: removed " + entries;
        }
        return "tool " + tool + " changed (" + (oldVersion == null ? "?" : oldVersion) + " -> " + newVersion
                + "): removed " + entries;
    }
}
