package dev.execache.core;

/** The counters a store keeps. A shared store keeps them in the store, so they are fleet-wide. */
public enum Counter {
    HITS,
    MISSES,
    /** Total latency saved by hits, in nanoseconds. */
    SAVED_NANOS,
    EVICTIONS,
    EXPIRATIONS,
    /** Entries removed because a tool they depended on changed. */
    INVALIDATIONS,
    STORE_ERRORS,
    /** Entries whose value failed its checksum when read: removed, never served. */
    DAMAGED,
    /** Calls answered with the result of an identical run that was in flight (single flight). */
    SHARED
}
