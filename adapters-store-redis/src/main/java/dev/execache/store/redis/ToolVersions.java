package dev.execache.store.redis;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Map;
import java.util.TreeMap;

/**
 * An entry's tool versions as one hash field: a JSON object, which the scripts read too
 * ({@code cjson}) to remove only the entries made with one version of a tool. Entries written
 * by an execache before it (each name and version preceded by its length and a colon) are
 * still read, until they expire.
 */
final class ToolVersions {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TypeReference<TreeMap<String, String>> MAP = new TypeReference<>() {
    };

    static String encode(Map<String, String> toolVersions) {
        try {
            return JSON.writeValueAsString(new TreeMap<>(toolVersions));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write tool versions " + toolVersions, e);
        }
    }

    static Map<String, String> decode(String text) {
        if (!text.startsWith("{")) {
            return decodeLengthPrefixed(text);
        }
        try {
            return JSON.readValue(text, MAP);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("tool versions field is damaged: " + text, e);
        }
    }

    private static Map<String, String> decodeLengthPrefixed(String text) {
        Map<String, String> toolVersions = new TreeMap<>();
        int at = 0;
        while (at < text.length()) {
            int colon = text.indexOf(':', at);
            int nameEnd = colon + 1 + Integer.parseInt(text, at, colon, 10);
            int versionColon = text.indexOf(':', nameEnd);
            if (colon < 0 || versionColon < 0) {
                throw new IllegalStateException("tool versions field is damaged at " + at + ": " + text);
            }
            int versionEnd = versionColon + 1 + Integer.parseInt(text, nameEnd, versionColon, 10);
            toolVersions.put(text.substring(colon + 1, nameEnd), text.substring(versionColon + 1, versionEnd));
            at = versionEnd;
        }
        return toolVersions;
    }

    private ToolVersions() {
    }
}
