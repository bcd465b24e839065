package dev.execache.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.util.RawValue;
import dev.execache.core.CacheStats;
import dev.execache.core.ExecutionError;
import java.time.Duration;

/** JSON in and out of the command line. */
final class Output {
    static final ObjectMapper JSON = JsonMapper.builder().enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();

    private Output() {
    }

    /** Parses user-given JSON into plain Java values (Map, List, String, Number, Boolean, null). */
    static Object parseJson(String text, String source) {
        try {
            return JSON.readValue(text, Object.class);
        } catch (JsonProcessingException e) {
            String where = e.getLocation() == null ? ""
                    : " at line " + e.getLocation().getLineNr() + ", column " + e.getLocation().getColumnNr();
            throw new UsageException(source + ": not valid JSON" + where + ": " + e.getOriginalMessage());
        }
    }

    /**
     * A result as the sandbox produced it, written out verbatim: never parsed, so every nesting
     * depth and every escape (a lone surrogate stays {@code \\ud800}) reaches the reader as it was,
     * identically through {@code run --json} and {@code serve}. The sandbox checked it is JSON.
     */
    static JsonNode rawJson(String json) {
        return JSON.getNodeFactory().rawValueNode(new RawValue(json));
    }

    static ObjectNode error(ExecutionError error) {
        ObjectNode node = JSON.createObjectNode();
        node.put("type", error.type().displayName());
        node.put("message", error.message());
        node.put("stack", error.stack());
        if (error.line() > 0) {
            node.put("line", error.line());
            node.put("column", error.column());
        }
        return node;
    }

    static ObjectNode stats(CacheStats stats) {
        ObjectNode node = JSON.createObjectNode();
        node.put("hits", stats.hits());
        node.put("misses", stats.misses());
        node.put("shared", stats.shared());
        node.put("hitRate", stats.hitRate());
        node.put("totalSavedMs", millis(stats.totalSaved()));
        node.put("averageSavedMs", millis(stats.averageSaved()));
        node.put("entries", stats.entries());
        node.put("evictions", stats.evictions());
        node.put("expirations", stats.expirations());
        node.put("invalidations", stats.invalidations());
        node.put("storeErrors", stats.storeErrors());
        node.put("damaged", stats.damaged());
        node.put("estimatedBytes", stats.estimatedBytes());
        node.put("failed", stats.failed());
        node.put("bypassed", stats.bypassed());
        ObjectNode uncacheable = node.putObject("uncacheable");
        stats.uncacheable().forEach(uncacheable::put);
        if (stats.countingSince() == null) {
            node.putNull("countingSince");
        } else {
            node.put("countingSince", stats.countingSince().toString());
        }
        ObjectNode tools = node.putObject("tools");
        stats.tools().forEach((tool, counted) -> {
            ObjectNode one = tools.putObject(tool);
            one.put("hits", counted.hits());
            one.put("misses", counted.misses());
            one.put("hitRate", counted.hitRate());
            one.put("savedMs", millis(counted.saved()));
            one.put("invalidations", counted.invalidations());
            one.put("shared", counted.shared());
            one.put("failed", counted.failed());
            one.put("uncacheable", counted.uncacheable());
            one.put("bypassed", counted.bypassed());
        });
        return node;
    }

    /** {@code 512 B}, {@code 1.5 KiB}, {@code 64.0 MiB}. */
    static String bytes(long bytes) {
        if (bytes < 1024) {
            return bytes + " B";
        }
        if (bytes < 1024 * 1024) {
            return String.format(java.util.Locale.ROOT, "%.1f KiB", bytes / 1024.0);
        }
        return String.format(java.util.Locale.ROOT, "%.1f MiB", bytes / (1024.0 * 1024));
    }

    static double millis(Duration duration) {
        return Math.round(duration.toNanos() / 1e4) / 100.0;
    }

    static String write(JsonNode node) {
        try {
            return JSON.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * What a run did besides its result: the tool calls it made (tool, cache status, ms), why it
     * was not stored, and the sources of non-determinism its code used.
     */
    static void runDetails(ObjectNode node, dev.execache.core.ExecutionOutcome outcome) {
        com.fasterxml.jackson.databind.node.ArrayNode calls = node.putArray("toolCalls");
        for (dev.execache.core.ToolCallRecord call : outcome.toolCalls()) {
            ObjectNode one = calls.addObject();
            one.put("tool", call.tool());
            one.put("cache", call.status().name().toLowerCase(java.util.Locale.ROOT));
            one.put("ms", millis(call.time()));
            one.put("error", call.error());
            if (call.cancelled() != null) {
                one.put("cancelled", call.cancelled() == dev.execache.core.ToolCallRecord.Cancelled.NOT_APPLIED
                        ? "not applied" : "possibly applied");
            }
        }
        node.put("notStored", outcome.notStoredBecause());
        com.fasterxml.jackson.databind.node.ArrayNode sources = node.putArray("nondeterminism");
        outcome.result().nondeterminism().forEach(sources::add);
    }
}
