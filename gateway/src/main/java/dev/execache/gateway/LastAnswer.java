package dev.execache.gateway;

import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

/**
 * One tool's last answer and the text it was made from. A repeated hit gives the same text again
 * and gets the same answer object back: it is not made again, and the protocol
 * writes an answer object it has written before only once (#29). A text longer than
 * {@link #KEPT_CHARS} is not kept.
 */
final class LastAnswer {
    private static final int KEPT_CHARS = 64 * 1024;

    private final AtomicReference<Kept> last = new AtomicReference<>();

    /** The last answer when {@code text} is the last text, else the one {@code make} makes of it. */
    CallToolResult of(String text, Function<String, CallToolResult> make) {
        return of(text, Map.of(), make);
    }

    /**
     * As {@link #of(String, Function)}, the answer carrying {@code meta} under {@link CacheMeta#KEY} in
     * its {@code _meta} beside the tool's own: the last answer only when both are the same.
     */
    CallToolResult of(String text, Map<String, Object> meta, Function<String, CallToolResult> make) {
        Kept kept = last.get();
        if (kept != null && kept.text().equals(text) && kept.meta().equals(meta)) {
            return kept.answer();
        }
        CallToolResult answer = make.apply(text);
        if (!meta.isEmpty()) {
            Map<String, Object> merged = answer.meta() == null ? new LinkedHashMap<>() : new LinkedHashMap<>(answer.meta());
            merged.put(CacheMeta.KEY, meta);
            answer = new CallToolResult(answer.content(), answer.isError(), answer.structuredContent(), merged);
        }
        last.set(text.length() <= KEPT_CHARS ? new Kept(text, meta, answer) : null);
        return answer;
    }

    private record Kept(String text, Map<String, Object> meta, CallToolResult answer) {
    }
}
