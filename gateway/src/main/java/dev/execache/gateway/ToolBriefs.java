package dev.execache.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelcontextprotocol.spec.McpSchema.Tool;
import io.modelcontextprotocol.spec.McpSchema.ToolAnnotations;
import java.io.IOException;
import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * execache's own tools as tools/list offers them: a short description and short argument descriptions from
 * {@code tool-briefs.json}, no output schema, no patterns, no annotation hint that says what MCP assumes without it. tools/list is read into every agent's context on every
 * turn, so it holds what an agent needs to pick a tool and call it; the full contract (every field of the answer,
 * every error) stays in the full definition, which describe_tools gives on demand.
 */
final class ToolBriefs {
    /**
     * Keywords of an argument's schema that check a value the handler checks anyway: left out of the list. So is the
     * input schema's {@code additionalProperties: false}: an argument a tool does not take is a tool error naming it.
     */
    private static final Set<String> LEFT_OUT = Set.of("pattern", "uniqueItems", "minLength");
    private static final ObjectNode ALL = read();

    private ToolBriefs() {
    }

    /**
     * The tool as listed.
     *
     * @param more what the description's {@code {more}} becomes
     * @param timeout what an argument description's {@code {timeout}} becomes
     */
    static Tool listed(Tool full, String more, String timeout) {
        JsonNode brief = ALL.get(full.name());
        if (brief == null) {
            throw new IllegalStateException("tool-briefs.json has no brief of " + full.name());
        }
        Map<String, Object> input = new LinkedHashMap<>(full.inputSchema());
        input.remove("additionalProperties");
        if (input.get("properties") instanceof Map<?, ?> properties) {
            Map<String, Object> shortened = new LinkedHashMap<>();
            properties.forEach((name, schema) -> {
                Map<String, Object> property = new LinkedHashMap<>();
                if (schema instanceof Map<?, ?> given) {
                    given.forEach((key, value) -> {
                        if (!LEFT_OUT.contains(String.valueOf(key)) && !"description".equals(key)) {
                            property.put(String.valueOf(key), withoutLeftOut(value));
                        }
                    });
                }
                JsonNode said = brief.path("arguments").get(String.valueOf(name));
                if (said == null) {
                    throw new IllegalStateException("tool-briefs.json has no brief of " + full.name() + "." + name);
                }
                property.put("description", said.textValue().replace("{timeout}", timeout));
                shortened.put(String.valueOf(name), property);
            });
            input.put("properties", shortened);
        }
        ToolAnnotations hints = full.annotations();
        boolean readOnly = hints != null && Boolean.TRUE.equals(hints.readOnlyHint());
        return Tool.builder(full.name(), input)
                .title(full.title())
                .description(brief.get("description").textValue().replace("{more}", more))
                .annotations(hints == null ? null : ToolAnnotations.builder()
                        .readOnlyHint(unlessDefault(hints.readOnlyHint(), false))
                        .destructiveHint(readOnly ? null : unlessDefault(hints.destructiveHint(), true))
                        .idempotentHint(readOnly ? null : unlessDefault(hints.idempotentHint(), false))
                        .openWorldHint(unlessDefault(hints.openWorldHint(), true))
                        .build())
                .build();
    }

    /**
     * A hint as listed: left out (null) where it says what a client assumes of a tool without it (MCP's defaults).
     * A read-only tool's destructive and idempotent hints are left out too: MCP gives them meaning only when
     * readOnlyHint is false.
     */
    private static Boolean unlessDefault(Boolean hint, boolean mcpDefault) {
        return hint == null || hint == mcpDefault ? null : hint;
    }

    private static Object withoutLeftOut(Object value) {
        if (value instanceof Map<?, ?> map) {
            Map<String, Object> kept = new LinkedHashMap<>();
            map.forEach((key, inner) -> {
                if (!LEFT_OUT.contains(String.valueOf(key))) {
                    kept.put(String.valueOf(key), withoutLeftOut(inner));
                }
            });
            return kept;
        }
        return value;
    }

    private static ObjectNode read() {
        try (InputStream in = ToolBriefs.class.getResourceAsStream("tool-briefs.json")) {
            if (in == null) {
                throw new IllegalStateException("tool-briefs.json is missing from the jar");
            }
            return (ObjectNode) Json.MAPPER.readTree(in);
        } catch (IOException e) {
            throw new IllegalStateException("tool-briefs.json cannot be read: " + e.getMessage(), e);
        }
    }
}
