package dev.execache.store.redis;

import java.util.Map;
import java.util.TreeMap;

/**
 * An entry's tool versions as one hash field: each name and version preceded by its length
 * and a colon, so that no character in either needs escaping. Only Java reads it; the
 * scripts get the tool names apart.
 */
final class ToolVersions {

    static String encode(Map<String, String> toolVersions) {
        StringBuilder text = new StringBuilder();
        toolVersions.forEach((tool, version) -> {
            text.append(tool.length()).append(':').append(tool);
            text.append(version.length()).append(':').append(version);
        });
        return text.toString();
    }

    static Map<String, String> decode(String text) {
        Map<String, String> toolVersions = new TreeMap<>();
        int[] at = {0};
        while (at[0] < text.length()) {
            String tool = next(text, at);
            toolVersions.put(tool, next(text, at));
        }
        return toolVersions;
    }

    private static String next(String text, int[] at) {
        int colon = text.indexOf(':', at[0]);
        if (colon < 0) {
            throw new IllegalStateException("tool versions field is damaged at " + at[0] + ": " + text);
        }
        int length = Integer.parseInt(text, at[0], colon, 10);
        String part = text.substring(colon + 1, colon + 1 + length);
        at[0] = colon + 1 + length;
        return part;
    }

    private ToolVersions() {
    }
}
