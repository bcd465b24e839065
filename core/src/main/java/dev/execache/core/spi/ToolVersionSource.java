package dev.execache.core.spi;

import java.util.Map;

/** The current version (or schema fingerprint) of each tool code may depend on. */
public interface ToolVersionSource {

    /** Every known tool with its current version. */
    Map<String, String> versions();

    /**
     * Asks to be told when a tool's version changes. A source that never changes while the
     * process runs (a one-shot command) may ignore it; the policy then compares against the
     * versions the store saw last.
     */
    default void addListener(Listener listener) {
    }

    @FunctionalInterface
    interface Listener {
        /** @param oldVersion the version it had until now: entries made with it are stale */
        void versionChanged(String tool, String oldVersion, String newVersion);
    }
}
