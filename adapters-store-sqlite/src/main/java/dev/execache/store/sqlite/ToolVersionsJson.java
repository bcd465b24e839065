package dev.execache.store.sqlite;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.execache.core.CanonicalJson;
import java.util.Iterator;
import java.util.Map;
import java.util.TreeMap;

/**
 * The {@code tool_versions} column: a flat JSON object of strings, {@code {"tool":"version"}},
 * readable by people and by SQLite's JSON functions. Written by core's canonical writer (as
 * keys are), read by Jackson.
 */
final class ToolVersionsJson {
    private static final ObjectMapper JSON = JsonMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();

    private ToolVersionsJson() {
    }

    static String write(Map<String, String> toolVersions) {
        return CanonicalJson.write(new TreeMap<>(toolVersions), "toolVersions");
    }

    /** @throws IllegalArgumentException if {@code json} is not a flat object of strings */
    static Map<String, String> read(String json) {
        JsonNode object;
        try {
            object = JSON.readTree(json);
        } catch (JsonProcessingException e) {
            throw notFlat(json, e.getOriginalMessage());
        }
        if (object == null || !object.isObject()) {
            throw notFlat(json, "not an object");
        }
        Map<String, String> toolVersions = new TreeMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> fields = object.fields(); fields.hasNext(); ) {
            Map.Entry<String, JsonNode> field = fields.next();
            if (!field.getValue().isTextual()) {
                throw notFlat(json, "the version of " + field.getKey() + " is not a string");
            }
            toolVersions.put(field.getKey(), field.getValue().textValue());
        }
        return toolVersions;
    }

    private static IllegalArgumentException notFlat(String json, String problem) {
        return new IllegalArgumentException("tool_versions is not a flat JSON object of strings (" + problem + "): "
                + json);
    }
}
