package dev.execache.mcp.server.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.core.spi.Telemetry;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The W3C Trace Context fields of a request ({@code traceparent}, {@code tracestate}) where MCP carries them:
 * unprefixed in {@code params._meta} (SEP-414, the MCP semantic conventions), or in HTTP headers.
 */
public final class TraceFields {
    private TraceFields() {
    }

    /** The fields in a request's {@code _meta}; empty when it carries no {@code traceparent}. */
    static Map<String, String> of(JsonNode meta) {
        if (meta == null || !meta.path(Telemetry.TRACEPARENT).isTextual()) {
            return Map.of();
        }
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put(Telemetry.TRACEPARENT, meta.get(Telemetry.TRACEPARENT).textValue());
        if (meta.path(Telemetry.TRACESTATE).isTextual()) {
            fields.put(Telemetry.TRACESTATE, meta.get(Telemetry.TRACESTATE).textValue());
        }
        return fields;
    }

    /** The fields in HTTP headers, read by {@code header}; empty when there is no {@code traceparent}. */
    public static Map<String, String> ofHeaders(java.util.function.Function<String, String> header) {
        String parent = header.apply(Telemetry.TRACEPARENT);
        if (parent == null) {
            return Map.of();
        }
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put(Telemetry.TRACEPARENT, parent);
        String state = header.apply(Telemetry.TRACESTATE);
        if (state != null) {
            fields.put(Telemetry.TRACESTATE, state);
        }
        return fields;
    }
}
