package dev.execache.core.spi;

import dev.execache.core.CacheStatus;
import dev.execache.core.ToolCallOutcome;
import dev.execache.core.ToolResult;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * One tool call made by code, as the host answered it: the call's outcome as the tool cache gave
 * it (one {@link ToolCallOutcome}, as for any tool call), and what the run needs beside it to
 * decide whether it may be stored.
 *
 * @param tool the tool's name ({@code SERVER__TOOL}), or {@code SERVER.TOOL} as the code named it
 *     when there is no such tool
 * @param version the tool's version when it was called; null when it has none (a refused call)
 * @param outcome what the code gets, how the tool cache answered it (bypass for a tool that is not
 *     cached), and when the cached answer expires (null when it has none: a run that used it is
 *     stored for no longer)
 * @param cacheable whether the call is a read whose answer a run may depend on: the tool is read-only
 *     (cached, or asked every time as a local server's read), the call succeeded, and asking it again
 *     changes nothing, so a revalidation may. A run that made a call that is not cacheable is not
 *     stored; one that used a cacheable answer that was not stored ({@link #stored}) is kept only for
 *     revalidation.
 * @param bytes the size of the answer the code gets
 * @param writesSeen the write generation of the tool's server as the store had it before the call
 *     was made (see {@link WriteGenerations}), by server; empty when the server's writes are not
 *     counted. A run that used the answer is stored only if none of them has moved.
 */
public record CodeToolCall(String tool, String version, ToolCallOutcome outcome, boolean cacheable, long bytes,
        Map<String, Long> writesSeen) {

    public CodeToolCall {
        Objects.requireNonNull(tool, "tool must not be null");
        Objects.requireNonNull(outcome, "outcome must not be null");
        writesSeen = writesSeen == null ? Map.of() : Map.copyOf(writesSeen);
    }

    /** A call whose answer has no expiry of its own and whose server's writes are not counted. */
    public CodeToolCall(String tool, String version, ToolResult answer, boolean cacheable, CacheStatus status,
            long bytes) {
        this(tool, version, new ToolCallOutcome(answer, status), cacheable, bytes, Map.of());
    }

    /** A call that never reached a tool (no such tool, or one code may not call). */
    public static CodeToolCall refused(String server, String tool, String message) {
        return new CodeToolCall(server + "." + tool, null, ToolResult.error(message), false, CacheStatus.BYPASS,
                message.length());
    }

    /** What the code gets. */
    public ToolResult answer() {
        return outcome.result();
    }

    public CacheStatus status() {
        return outcome.status();
    }

    /**
     * Whether the answer is in the cache (a hit, or stored as it was made): its outcome gives no reason
     * why it was not. A run is never fresher than its answers: one that used an answer that was not
     * stored is never served as a hit.
     */
    public boolean stored() {
        return outcome.notCachedBecause() == null && outcome.status() != CacheStatus.BYPASS;
    }

    /** When the cached answer the call gave expires; null when it has none. */
    public Instant expiresAt() {
        return outcome.expiresAt();
    }
}
