package dev.execache.core;

/** How a result was obtained. */
public enum CacheStatus {
    /** Taken from the store; nothing ran. */
    HIT,
    /** Not in the store: it ran (and a success was stored). */
    MISS,
    /** An identical request was running already; this one waited for its result. */
    SHARED,
    /** Caching is off for this request: it ran, nothing was read or written. */
    BYPASS,
    /** The store failed: it ran uncached. */
    STORE_ERROR,
    /**
     * A stored run whose freshness had lapsed: its tool calls were asked again, every answer was
     * the one it had read, so its stored result was answered without running the code, and its
     * freshness renewed.
     */
    REVALIDATED
}
