package dev.execache.cli.output;

/**
 * Text from the code (its console output, its error messages and stacks) made safe for a
 * person's terminal: every control character but newline and tab is shown as an escape
 * ({@code \x1b} for ESC, backslash-u-009b for U+009B) instead of being acted on, so the code
 * cannot write to the clipboard (OSC 52), hide or rewrite text or clear the screen.
 * Machine-readable output ({@code --json}, MCP) keeps the exact text.
 */
public final class TerminalText {
    private TerminalText() {
    }

    public static String escape(String text) {
        if (text == null || !hasControl(text)) {
            return text;
        }
        StringBuilder out = new StringBuilder(text.length() + 16);
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '\r' && i + 1 < text.length() && text.charAt(i + 1) == '\n') {
                out.append(c);
            } else if (c < 0x80 && isControl(c)) {
                out.append("\\x").append(Character.forDigit(c >> 4, 16)).append(Character.forDigit(c & 0xf, 16));
            } else if (isControl(c)) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    /**
     * JSON text with DEL and the C1 controls written as JSON escapes (U+009B as backslash-u-009b): the same JSON
     * value, nothing a terminal acts on (JSON text never holds the other controls raw).
     */
    public static String escapeJson(String json) {
        if (json == null || !hasControl(json)) {
            return json;
        }
        StringBuilder out = new StringBuilder(json.length() + 16);
        for (int i = 0; i < json.length(); i++) {
            char c = json.charAt(i);
            if (isControl(c)) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    private static boolean hasControl(String text) {
        for (int i = 0; i < text.length(); i++) {
            if (isControl(text.charAt(i))) {
                return true;
            }
        }
        return false;
    }

    private static boolean isControl(char c) {
        return (c < 0x20 && c != '\n' && c != '\t') || (c >= 0x7f && c <= 0x9f);
    }
}
