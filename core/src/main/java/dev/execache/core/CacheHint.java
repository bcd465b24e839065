package dev.execache.core;

/**
 * What a server said about caching one of its results, in the result's {@code _meta} as
 * {@code cache_hint} (the proposal SEP-2419, modelcontextprotocol/modelcontextprotocol#2419), or that the result
 * depended on the agent that asked ({@link #AGENT_ANSWERED}).
 */
public enum CacheHint {
    /** The server said nothing. */
    NONE,
    /** {@code no-cache}: the result is never stored. */
    NO_CACHE,
    /**
     * {@code cache}: the server means the result to be reused. It never makes a tool cacheable that
     * the rules keep uncached (one that may change something); a gateway caches, from then on, the
     * reads of a local server that it would otherwise ask every time.
     */
    CACHE,
    /**
     * The server asked the agent something during the call (sampling, elicitation, roots) and the result depended on
     * the answer: it is that agent's, at that moment, and never stored.
     */
    AGENT_ANSWERED;

    /** Whether a result with this hint is never kept: not itself, nor a run that read it. */
    public boolean forbidsStoring() {
        return this == NO_CACHE || this == AGENT_ANSWERED;
    }

    /** The hint a {@code cache_hint} value names; {@link #NONE} for anything else. */
    public static CacheHint of(Object value) {
        if ("no-cache".equals(value)) {
            return NO_CACHE;
        }
        return "cache".equals(value) ? CACHE : NONE;
    }
}
