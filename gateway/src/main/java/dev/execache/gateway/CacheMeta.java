package dev.execache.gateway;

import dev.execache.core.CacheStatus;
import dev.execache.core.Freshness;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Where an answer came from, in its {@code _meta} under execache's own key, and how fresh an answer
 * a request asks for, in the request's {@code _meta}. Both keys follow the MCP {@code _meta} naming
 * rules (2025-11-25): a reverse-DNS prefix whose second label is not {@code modelcontextprotocol}
 * or {@code mcp}, a slash, a name.
 *
 * <p>Ages are whole seconds, as HTTP's {@code Age} header gives them: an answer object then stays the
 * same for a second of repeated hits, and is written once ({@link LastAnswer}).
 */
final class CacheMeta {
    /** The answer's key: {@code {"status": "hit", "ageSeconds": 12, "freshForSeconds": 288}}. */
    static final String KEY = "dev.execache/cache";
    /** The request's key: {@code "no-cache"} or {@code "max-age=SECONDS"}, as HTTP's Cache-Control request directives. */
    static final String REQUEST_KEY = "dev.execache/cache-control";

    private CacheMeta() {
    }

    /**
     * What a request's {@code _meta} asks for; {@link Freshness#ANY} when it says nothing.
     *
     * @throws IllegalArgumentException naming the key, for a value that is not a directive
     */
    static Freshness freshnessOf(Map<String, Object> meta) {
        Object value = meta == null ? null : meta.get(REQUEST_KEY);
        if (value == null) {
            return Freshness.ANY;
        }
        if (!(value instanceof String directive)) {
            throw new IllegalArgumentException("_meta." + REQUEST_KEY + ": must be \"no-cache\" or \"max-age=SECONDS\","
                    + " not " + Json.jsonType(value));
        }
        try {
            return Freshness.parse(directive);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("_meta." + REQUEST_KEY + ": " + e.getMessage());
        }
    }

    /**
     * The value under {@link #KEY}.
     *
     * @param storedAt when the answer was made; null when not known
     * @param expiresAt when its stored copy expires; null when it is not stored
     * @param because why it was not cached; null when it was
     */
    static Map<String, Object> of(CacheStatus status, Instant storedAt, Instant expiresAt, String because, Instant now) {
        Map<String, Object> meta = new LinkedHashMap<>();
        meta.put("status", status.name().toLowerCase(Locale.ROOT));
        if (storedAt != null) {
            meta.put("ageSeconds", Math.max(0, Duration.between(storedAt, now).toSeconds()));
        }
        if (expiresAt != null) {
            meta.put("freshForSeconds", Math.max(0, Duration.between(now, expiresAt).toSeconds()));
        }
        if (because != null) {
            meta.put("reason", because);
        }
        return meta;
    }
}
