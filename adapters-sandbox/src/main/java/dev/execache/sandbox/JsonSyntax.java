package dev.execache.sandbox;

/**
 * Checks that text is one JSON value (RFC 8259), without building it and without recursion, so
 * that a result is JSON whatever reached the host.
 */
final class JsonSyntax {
    private final String text;
    private int pos;

    private JsonSyntax(String text) {
        this.text = text;
    }

    static boolean isValid(String text) {
        try {
            return new JsonSyntax(text).value();
        } catch (IndexOutOfBoundsException e) {
            return false;
        }
    }

    private boolean value() {
        // containers: '{' or '[' per open level; the expected next token follows from the top
        StringBuilder open = new StringBuilder();
        skipSpace();
        while (true) {
            if (!scalarOrOpen(open)) {
                return false;
            }
            // after a value: close containers and find the next element
            while (true) {
                skipSpace();
                if (open.length() == 0) {
                    return pos == text.length();
                }
                char top = open.charAt(open.length() - 1);
                char c = text.charAt(pos);
                if (c == ',') {
                    pos++;
                    skipSpace();
                    if (top == '{' && !member()) {
                        return false;
                    }
                    break;
                }
                if ((top == '{' && c == '}') || (top == '[' && c == ']')) {
                    pos++;
                    open.setLength(open.length() - 1);
                    continue;
                }
                return false;
            }
        }
    }

    /** One scalar, or an opening bracket followed by its first element's start (or its close). */
    private boolean scalarOrOpen(StringBuilder open) {
        while (true) {
            skipSpace();
            char c = text.charAt(pos);
            if (c == '{' || c == '[') {
                pos++;
                skipSpace();
                char next = text.charAt(pos);
                if ((c == '{' && next == '}') || (c == '[' && next == ']')) {
                    pos++;
                    return true;
                }
                open.append(c);
                if (c == '{' && !member()) {
                    return false;
                }
                continue;
            }
            return scalar();
        }
    }

    /** A member's name and colon; its value follows. */
    private boolean member() {
        if (text.charAt(pos) != '"' || !string()) {
            return false;
        }
        skipSpace();
        if (text.charAt(pos) != ':') {
            return false;
        }
        pos++;
        return true;
    }

    private boolean scalar() {
        char c = text.charAt(pos);
        if (c == '"') {
            return string();
        }
        if (c == '-' || (c >= '0' && c <= '9')) {
            return number();
        }
        return literal("true") || literal("false") || literal("null");
    }

    private boolean literal(String word) {
        if (text.startsWith(word, pos)) {
            pos += word.length();
            return true;
        }
        return false;
    }

    private boolean string() {
        pos++;
        while (true) {
            char c = text.charAt(pos++);
            if (c == '"') {
                return true;
            }
            if (c < 0x20) {
                return false;
            }
            if (c == '\\') {
                char escaped = text.charAt(pos++);
                if (escaped == 'u') {
                    for (int i = 0; i < 4; i++) {
                        if (Character.digit(text.charAt(pos++), 16) < 0) {
                            return false;
                        }
                    }
                } else if ("\"\\/bfnrt".indexOf(escaped) < 0) {
                    return false;
                }
            }
        }
    }

    private boolean number() {
        if (text.charAt(pos) == '-') {
            pos++;
        }
        if (text.charAt(pos) == '0') {
            pos++;
        } else if (!digits()) {
            return false;
        }
        if (pos < text.length() && text.charAt(pos) == '.') {
            pos++;
            if (!digits()) {
                return false;
            }
        }
        if (pos < text.length() && (text.charAt(pos) == 'e' || text.charAt(pos) == 'E')) {
            pos++;
            if (pos < text.length() && (text.charAt(pos) == '+' || text.charAt(pos) == '-')) {
                pos++;
            }
            return digits();
        }
        return true;
    }

    private boolean digits() {
        int start = pos;
        while (pos < text.length() && text.charAt(pos) >= '0' && text.charAt(pos) <= '9') {
            pos++;
        }
        return pos > start;
    }

    private void skipSpace() {
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            pos++;
        }
    }
}
