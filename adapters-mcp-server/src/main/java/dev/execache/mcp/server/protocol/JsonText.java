package dev.execache.mcp.server.protocol;

/**
 * JSON text on its way out as UTF-8. A string may hold a lone UTF-16 surrogate (JavaScript
 * allows it, and JSON.stringify writes it as an escape); UTF-8 cannot encode one, and Java's
 * encoder silently turns it into {@code ?}. Escaped as {@code \\uD800} it survives, as JSON allows.
 */
public final class JsonText {
    private JsonText() {
    }

    /** The JSON text with every lone surrogate written as a {@code \\u} escape; pairs are kept as they are. */
    public static String escapeLoneSurrogates(String json) {
        int first = firstLoneSurrogate(json);
        if (first < 0) {
            return json;
        }
        StringBuilder escaped = new StringBuilder(json.length() + 16).append(json, 0, first);
        for (int i = first; i < json.length(); i++) {
            char c = json.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < json.length() && Character.isLowSurrogate(json.charAt(i + 1))) {
                escaped.append(c).append(json.charAt(++i));
            } else if (Character.isSurrogate(c)) {
                escaped.append(String.format("\\u%04x", (int) c));
            } else {
                escaped.append(c);
            }
        }
        return escaped.toString();
    }

    private static int firstLoneSurrogate(String json) {
        for (int i = 0; i < json.length(); i++) {
            char c = json.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < json.length() && Character.isLowSurrogate(json.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return i;
            }
        }
        return -1;
    }
}
