package dev.execache.sandbox;

import java.util.ArrayList;
import java.util.List;

/**
 * The fields inside a runner frame (an error's phase, name, message, stack; a tool call's server
 * and tool): each its length in UTF-16 code units, as JavaScript counts them, a colon, then the
 * text ({@code 5:hello}), so that no character needs escaping. runner.js writes them.
 */
final class FrameFields {
    private FrameFields() {
    }

    /**
     * The first {@code count} fields of {@code text}, and where the rest begins (the last element).
     *
     * @throws IllegalArgumentException naming the frame when they are not there
     */
    static List<String> read(String text, int count, String frame) {
        List<String> fields = new ArrayList<>(count + 1);
        int at = 0;
        for (int i = 0; i < count; i++) {
            int colon = text.indexOf(':', at);
            int end = -1;
            if (colon > at) {
                try {
                    end = colon + 1 + Integer.parseInt(text, at, colon, 10);
                } catch (NumberFormatException e) {
                    end = -1;
                }
            }
            if (end <= colon || end > text.length()) {
                throw new IllegalArgumentException("malformed " + frame + " frame");
            }
            fields.add(text.substring(colon + 1, end));
            at = end;
        }
        fields.add(text.substring(at));
        return fields;
    }
}
