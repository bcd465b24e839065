package dev.execache.sandbox;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/** Replaces the host's own paths (Deno's install, the cache directory, the home) in text the caller sees. */
final class HostPaths {
    private final List<Map.Entry<String, String>> replacements;

    HostPaths(Map<String, String> replacements) {
        List<Map.Entry<String, String>> sorted = new ArrayList<>();
        for (Map.Entry<String, String> entry : replacements.entrySet()) {
            if (!entry.getKey().isEmpty()) {
                sorted.add(Map.entry(entry.getKey(), entry.getValue()));
            }
        }
        sorted.sort(Comparator.comparingInt((Map.Entry<String, String> e) -> e.getKey().length()).reversed());
        this.replacements = List.copyOf(sorted);
    }

    String scrub(String text) {
        if (text == null || text.isEmpty()) {
            return text;
        }
        String result = text;
        for (Map.Entry<String, String> replacement : replacements) {
            if (result.contains(replacement.getKey())) {
                result = result.replace(replacement.getKey(), replacement.getValue());
            }
        }
        return result;
    }
}
