package dev.execache.core;

/** Hears what the tool cache does. Every method does nothing unless overridden. */
public interface CacheListener {
    default void onHit(String tool, String key) {
    }

    default void onMiss(String tool, String key) {
    }

    /** An entry was removed to keep a rule's bound. */
    default void onEviction(String tool, String key) {
    }

    /** Entries of a tool were removed because its version changed. */
    default void onInvalidation(String tool, int removed) {
    }
}
