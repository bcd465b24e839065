package dev.execache.store.sqlite;

import dev.execache.core.CanonicalJson;
import java.util.Map;
import java.util.TreeMap;

/**
 * The {@code tool_versions} column: a flat JSON object of strings, {@code {"tool":"version"}},
 * readable by people and by SQLite's JSON functions.
 */
final class ToolVersionsJson {
    private ToolVersionsJson() {
    }

    static String write(Map<String, String> toolVersions) {
        return CanonicalJson.write(new TreeMap<>(toolVersions), "toolVersions");
    }

    /** @throws IllegalArgumentException if {@code json} is not a flat object of strings */
    static Map<String, String> read(String json) {
        return new Reader(json).object();
    }

    private static final class Reader {
        private final String json;
        private int at;

        Reader(String json) {
            this.json = json;
        }

        Map<String, String> object() {
            Map<String, String> toolVersions = new TreeMap<>();
            expect('{');
            if (peek() == '}') {
                at++;
            } else {
                do {
                    String tool = string();
                    expect(':');
                    toolVersions.put(tool, string());
                } while (next() == ',');
                at--;
                expect('}');
            }
            skipSpace();
            if (at != json.length()) {
                throw malformed("text after the object");
            }
            return toolVersions;
        }

        private String string() {
            expect('"');
            StringBuilder text = new StringBuilder();
            while (true) {
                if (at >= json.length()) {
                    throw malformed("unterminated string");
                }
                char c = json.charAt(at++);
                if (c == '"') {
                    return text.toString();
                }
                if (c != '\\') {
                    text.append(c);
                    continue;
                }
                if (at >= json.length()) {
                    throw malformed("unterminated escape");
                }
                char escaped = json.charAt(at++);
                switch (escaped) {
                    case '"', '\\', '/' -> text.append(escaped);
                    case 'b' -> text.append('\b');
                    case 'f' -> text.append('\f');
                    case 'n' -> text.append('\n');
                    case 'r' -> text.append('\r');
                    case 't' -> text.append('\t');
                    case 'u' -> {
                        if (at + 4 > json.length()) {
                            throw malformed("short \\u escape");
                        }
                        try {
                            text.append((char) Integer.parseInt(json.substring(at, at + 4), 16));
                        } catch (NumberFormatException e) {
                            throw malformed("bad \\u escape");
                        }
                        at += 4;
                    }
                    default -> throw malformed("bad escape \\" + escaped);
                }
            }
        }

        private void expect(char expected) {
            if (next() != expected) {
                throw malformed("expected '" + expected + "' at " + (at - 1));
            }
        }

        private char next() {
            char c = peek();
            at++;
            return c;
        }

        private char peek() {
            skipSpace();
            if (at >= json.length()) {
                throw malformed("unexpected end");
            }
            return json.charAt(at);
        }

        private void skipSpace() {
            while (at < json.length() && Character.isWhitespace(json.charAt(at))) {
                at++;
            }
        }

        private IllegalArgumentException malformed(String why) {
            return new IllegalArgumentException("tool_versions is not a flat JSON object of strings (" + why + "): " + json);
        }
    }
}
