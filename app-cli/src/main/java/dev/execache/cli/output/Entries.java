package dev.execache.cli.output;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.core.CachedExecutor;
import dev.execache.core.spi.CacheEntry;
import dev.execache.gateway.Json;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Collectors;

/** How cache entries read for a person ({@code list}, {@code inspect}) and as JSON. */
public final class Entries {
    private Entries() {
    }

    /** {@code 42s}, {@code 5m}, {@code 3h}, {@code 2d}: the largest whole unit, as ls and docker ps show ages. */
    public static String age(Duration duration) {
        long seconds = Math.max(0, duration.toSeconds());
        if (seconds < 60) {
            return seconds + "s";
        }
        if (seconds < 3600) {
            return seconds / 60 + "m";
        }
        if (seconds < 86_400) {
            return seconds / 3600 + "h";
        }
        return seconds / 86_400 + "d";
    }

    public static String size(long bytes) {
        if (bytes < 1024) {
            return bytes + " B";
        }
        if (bytes < 1024 * 1024) {
            return String.format(Locale.ROOT, "%.1f KiB", bytes / 1024.0);
        }
        return String.format(Locale.ROOT, "%.1f MiB", bytes / (1024.0 * 1024));
    }

    /** {@code github=v2, jira=schema:ab12}, or {@code none}. */
    public static String tools(Map<String, String> tools) {
        return tools.isEmpty() ? "none"
                : tools.entrySet().stream().map(tool -> tool.getKey() + "=" + tool.getValue())
                        .collect(Collectors.joining(", "));
    }

    /** The key's first characters, enough to tell entries apart and to give {@code inspect}. */
    public static String shortKey(String key) {
        return key.length() <= 24 ? key : key.substring(0, 24) + "…";
    }

    public static ObjectNode json(CacheEntry entry, Instant now) {
        ObjectNode node = Json.MAPPER.createObjectNode();
        node.put("key", entry.key());
        node.put("label", entry.label());
        node.put("createdAt", entry.createdAt().toString());
        node.put("expiresAt", entry.expiresAt().toString());
        node.put("ageMs", Duration.between(entry.createdAt(), now).toMillis());
        node.put("ttlLeftMs", Math.max(0, Duration.between(now, entry.expiresAt()).toMillis()));
        node.put("hits", entry.hits());
        node.put("executionTimeMs", Json.millis(entry.executionTime()));
        node.put("bytes", entry.estimatedBytes());
        node.set("tools", Json.MAPPER.valueToTree(entry.dependsOnTools()));
        ArrayNode sources = node.putArray("nondeterminism");
        new TreeSet<>(entry.nondeterminism()).forEach(sources::add);
        ArrayNode trace = node.putArray("trace");
        for (CachedExecutor.TracedCall call : CachedExecutor.traceOf(entry)) {
            ObjectNode one = trace.addObject();
            one.put("tool", call.tool());
            one.put("version", call.version());
            one.put("argumentsDigest", call.argumentsDigest());
            one.put("answerDigest", call.answerDigest());
        }
        return node;
    }
}
