package dev.execache.gateway;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.util.Map;

/**
 * The input and output schemas of serve's own tools, kept as JSON in {@code tool-schemas.json}
 * beside this class and read once. A description may name {@code {configFile}} or
 * {@code {timeout}}, which the settings fill in.
 */
final class ToolSchemas {
    private static final TypeReference<Map<String, Object>> OBJECT = new TypeReference<>() {
    };
    private static final ObjectNode ALL = read();

    private ToolSchemas() {
    }

    /** The tool's input schema, as the SDK's tool definition takes it. */
    static Map<String, Object> input(String tool) {
        return Json.MAPPER.convertValue(schema(tool, "input"), OBJECT);
    }

    /** The tool's input schema with the settings' values in its descriptions and the timeout's maximum. */
    static Map<String, Object> input(String tool, String configFile, String timeout, double maxTimeout) {
        ObjectNode schema = schema(tool, "input").deepCopy();
        schema.get("properties").forEach(property -> {
            if (property instanceof ObjectNode object && object.path("description").isTextual()) {
                object.put("description", object.get("description").textValue()
                        .replace("{configFile}", configFile).replace("{timeout}", timeout));
            }
        });
        if (schema.path("properties").get("timeout") instanceof ObjectNode limit) {
            // a whole number of seconds as an integer, as JSON read from text gives it
            if (maxTimeout == Math.rint(maxTimeout) && maxTimeout <= Integer.MAX_VALUE) {
                limit.put("maximum", (int) maxTimeout);
            } else {
                limit.put("maximum", maxTimeout);
            }
        }
        return Json.MAPPER.convertValue(schema, OBJECT);
    }

    static Map<String, Object> output(String tool) {
        return Json.MAPPER.convertValue(schema(tool, "output"), OBJECT);
    }

    private static JsonNode schema(String tool, String which) {
        JsonNode schema = ALL.path(tool).get(which);
        if (schema == null) {
            throw new IllegalStateException("tool-schemas.json has no " + which + " schema for " + tool);
        }
        return schema;
    }

    private static ObjectNode read() {
        try (InputStream in = ToolSchemas.class.getResourceAsStream("tool-schemas.json")) {
            if (in == null) {
                throw new IllegalStateException("tool-schemas.json is missing from the jar");
            }
            return (ObjectNode) Json.MAPPER.readTree(in);
        } catch (IOException e) {
            throw new IllegalStateException("tool-schemas.json cannot be read: " + e.getMessage(), e);
        }
    }
}
