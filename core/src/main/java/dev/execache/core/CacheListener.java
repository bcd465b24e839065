package dev.execache.core;

/** Hears what the tool cache does. Every method does nothing unless overridden. */
public interface CacheListener {
    default void onHit(String tool, String key) {
    }

    default void onMiss(String tool, String key) {
    }

    /** An identical call was running already; this one got its answer. */
    default void onShared(String tool, String key) {
    }

    /** An entry was removed to keep the bound of the rule with glob {@code toolGlob}. */
    default void onEviction(String toolGlob, String key) {
    }

    /** Entries of a tool were removed because its version changed. */
    default void onInvalidation(String tool, int removed) {
    }
}
