package dev.execache.core.spi;

import java.util.Locale;
import java.util.Optional;

/**
 * The counters a store keeps. A shared store keeps them in the store, so they are fleet-wide.
 *
 * <p>Every lookup is a hit or a miss. A miss that ran and was not stored is counted once more,
 * by why: {@link #FAILED} or one {@code UNCACHEABLE_} reason. Calls that were never looked up are
 * {@link #BYPASSED} (caching off) or {@link #UNCACHEABLE_READS_UNWATCHABLE}.
 */
public enum Counter {
    /** Every run and tool call, however it was answered (hit, miss, shared, or not looked up at all). */
    CALLS,
    HITS,
    MISSES,
    /** Total latency saved by hits, in nanoseconds. */
    SAVED_NANOS,
    /**
     * Runs answered by revalidation: a stale stored run whose tool calls, asked again, all gave the
     * answers it had read; neither a hit nor a miss.
     */
    REVALIDATIONS,
    /** Time revalidations saved, in nanoseconds: each run's own time less its revalidation's. */
    REVALIDATION_SAVED_NANOS,
    /** Stale stored runs whose tool calls, asked again, gave another answer: the code ran again (a miss too). */
    REVALIDATIONS_CHANGED,
    EVICTIONS,
    EXPIRATIONS,
    /**
     * Entries removed before their expiry because what they depended on changed, whatever the
     * cause: the sum of the {@code INVALIDATED_BY_} counters.
     */
    INVALIDATIONS,
    /** Entries removed because a call that may have changed their server was made through execache. */
    INVALIDATED_BY_WRITE,
    /** Entries removed because a tool they depended on has a new version (or schema). */
    INVALIDATED_BY_VERSION,
    /** Entries removed because a server said a resource they read was updated. */
    INVALIDATED_BY_RESOURCE,
    /** Entries removed by hand ({@code execache invalidate}, {@code clear}, {@code clear_cache}). */
    INVALIDATED_BY_HAND,
    /**
     * Runs and calls whose caller asked for a fresher answer than a stored one ({@code no-cache},
     * {@code max-age}): they ran, and a success replaced the stored answer.
     */
    REFRESHED,
    STORE_ERRORS,
    /** Entries whose value failed its checksum when read: removed, never served. */
    DAMAGED,
    /** Calls answered with the result of an identical run that was in flight (single flight). */
    SHARED,
    /** Runs and tool calls that failed (an error, a timeout, a tool's exception): never stored. */
    FAILED,
    /** Runs and tool calls that went around the cache: caching is off ({@code --no-cache}), or a rule turns a tool off. */
    BYPASSED,
    /** Succeeded, not stored: the code used a nondeterministic source and cache_nondeterministic is false. */
    UNCACHEABLE_NONDETERMINISTIC,
    /** Succeeded, not stored: the run called (or this is) a tool that is not cached, as it may change something. */
    UNCACHEABLE_MUTATING_TOOL,
    /** Succeeded, not stored: a tool the code called failed. */
    UNCACHEABLE_TOOL_FAILED,
    /**
     * Succeeded, not stored: a tool answer it used (or, for a tool call, its own answer) may be older
     * than a call that may have changed its server and that started or ended while it was in flight,
     * or expired before the run ended.
     */
    UNCACHEABLE_STALE_TOOL_ANSWER,
    /**
     * Not stored: a read of a local server, asked every time by default so that it is never stale (a
     * change on disk is not seen by the cache); a rule, the server's settings or its hint cache it.
     */
    UNCACHEABLE_LOCAL_SERVER,
    /**
     * A run not stored as fresh: an answer it used was not stored (asked around the cache, asked fresh,
     * or the server said not to keep it), so the run is kept only for revalidation, never served as a hit.
     */
    UNCACHEABLE_TOOL_ANSWER_NOT_STORED,
    /** Succeeded, not stored: the server said so ({@code cache_hint: no-cache} in the result's {@code _meta}, SEP-2419). */
    UNCACHEABLE_SERVER_HINT,
    /** Not stored: the run made more tool calls than its limit. */
    UNCACHEABLE_TOO_MANY_TOOL_CALLS,
    /** Not stored: the run's tool calls returned more bytes than its limit. */
    UNCACHEABLE_TOOL_RESULTS_TOO_LARGE,
    /** Neither looked up nor stored: the files the code may read could not all be fingerprinted. */
    UNCACHEABLE_READS_UNWATCHABLE,
    /**
     * Bytes of tool answers that code consumed (UTF-8), counted per tool as a run's calls are
     * answered; tool calls an agent makes itself are not counted here.
     */
    TOOL_ANSWER_BYTES,
    /**
     * Bytes code mode kept out of the agent's context: for each successful run that called tools,
     * the bytes of the tool answers it consumed minus the bytes of the result it returned (not
     * below zero). A hit or shared result counts the run's figure again: the agent was spared
     * those bytes again.
     */
    KEPT_OUT_BYTES;

    /**
     * The counter a store wrote under {@code name}; empty for a name a newer execache added, so
     * that a store shared with it is read rather than refused.
     */
    public static Optional<Counter> named(String name) {
        try {
            return Optional.of(valueOf(name));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    /** The reason of an {@code UNCACHEABLE_} counter in lower case ({@code nondeterministic}), null for the others. */
    public String uncacheableReason() {
        String name = name();
        return name.startsWith("UNCACHEABLE_") ? name.substring("UNCACHEABLE_".length()).toLowerCase(Locale.ROOT)
                : null;
    }
}
