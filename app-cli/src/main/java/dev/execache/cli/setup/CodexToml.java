package dev.execache.cli.setup;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Codex's config.toml changed line by line: the tables of the servers that move are taken out and
 * one {@code [mcp_servers.execache]} table goes in, every other line as it was. Hand-written because
 * a TOML library writes a whole document back, without the person's comments and layout; the
 * caller parses the result and checks it holds exactly what it should.
 */
final class CodexToml {
    private CodexToml() {
    }

    /**
     * @param envVars the variables Codex must pass on to execache (Codex starts a server with a few
     *     of its own variables only, and those a table's env_vars names)
     * @param startupTimeoutSec how long Codex gives execache to start and list its tools
     */
    static String rewrite(String text, Set<String> removed, String command, List<String> args, List<String> envVars,
            int startupTimeoutSec) {
        return rewrite(text, removed, command, args, envVars, startupTimeoutSec, 0);
    }

    /** @param toolTimeoutSec the entry's {@code tool_timeout_sec}, 0 for none (Codex's default) */
    static String rewrite(String text, Set<String> removed, String command, List<String> args, List<String> envVars,
            int startupTimeoutSec, int toolTimeoutSec) {
        String newline = text.contains("\r\n") ? "\r\n" : "\n";
        List<String> lines = new ArrayList<>(List.of(text.split("\n", -1)));
        boolean endsWithNewline = text.endsWith("\n");
        if (endsWithNewline) {
            lines.remove(lines.size() - 1);
        }
        boolean[] drop = new boolean[lines.size()];
        int insertAt = -1;
        List<String> table = List.of();
        for (int i = 0; i < lines.size(); i++) {
            String line = strip(lines.get(i));
            if (line.startsWith("[")) {
                table = header(line);
                if (removes(table, removed)) {
                    int first = commentAbove(lines, i, drop);
                    int end = i + 1;
                    while (end < lines.size() && !strip(lines.get(end)).startsWith("[")) {
                        end++;
                    }
                    // comments and blank lines just above the next table belong to it
                    int last = end - 1;
                    while (last > i && (strip(lines.get(last)).isEmpty() || strip(lines.get(last)).startsWith("#"))) {
                        last--;
                    }
                    if (last + 1 < end && strip(lines.get(last + 1)).isEmpty()) {
                        last++;
                    }
                    for (int j = first; j <= last; j++) {
                        drop[j] = true;
                    }
                    if (insertAt < 0) {
                        insertAt = first;
                    }
                    i = end - 1;
                }
                continue;
            }
            List<String> key = key(line);
            if (!key.isEmpty()) {
                List<String> full = new ArrayList<>(table);
                full.addAll(key);
                if (removes(full, removed)) {
                    drop[i] = true;
                }
            }
        }
        String execache = "[mcp_servers.execache]" + newline + "command = " + string(command) + newline + "args = ["
                + String.join(", ", args.stream().map(CodexToml::string).toList()) + "]" + newline
                + (envVars.isEmpty() ? "" : "env_vars = [" + String.join(", ", envVars.stream().map(CodexToml::string).toList())
                        + "]" + newline)
                + "startup_timeout_sec = " + startupTimeoutSec + newline
                + (toolTimeoutSec > 0 ? "tool_timeout_sec = " + toolTimeoutSec + newline : "");
        StringBuilder result = new StringBuilder();
        for (int i = 0; i < lines.size(); i++) {
            if (i == insertAt) {
                result.append(execache);
                boolean more = false;
                for (int j = i; j < lines.size() && !more; j++) {
                    more = !drop[j];
                }
                if (more) {
                    result.append(newline);
                }
            }
            if (!drop[i]) {
                result.append(lines.get(i)).append(i < lines.size() - 1 || endsWithNewline ? "\n" : "");
            }
        }
        if (insertAt < 0) {
            if (result.length() > 0 && result.charAt(result.length() - 1) != '\n') {
                result.append(newline);
            }
            if (result.length() > 0) {
                result.append(newline);
            }
            result.append(execache);
        }
        return result.toString();
    }

    /**
     * The comment lines written directly above the table of server {@code name} (no blank line between), which are
     * about it: they go with it.
     */
    static List<String> comments(String text, String name) {
        List<String> lines = List.of(text.split("\r?\n", -1));
        for (int i = 0; i < lines.size(); i++) {
            String line = strip(lines.get(i));
            if (line.startsWith("[") && header(line).equals(List.of("mcp_servers", name))) {
                int first = commentAbove(lines, i, new boolean[lines.size()]);
                return lines.subList(first, i).stream().map(String::strip).toList();
            }
        }
        return List.of();
    }

    /** The first of the comment lines directly above line {@code header} that are not dropped already. */
    private static int commentAbove(List<String> lines, int header, boolean[] drop) {
        int first = header;
        while (first > 0 && !drop[first - 1] && strip(lines.get(first - 1)).startsWith("#")) {
            first--;
        }
        return first;
    }

    private static boolean removes(List<String> keys, Set<String> removed) {
        return keys.size() >= 2 && keys.get(0).equals("mcp_servers") && removed.contains(keys.get(1));
    }

    private static String strip(String line) {
        return line.strip();
    }

    /** The keys of a table header ({@code [a.b]} or {@code [[a.b]]}). */
    private static List<String> header(String line) {
        int start = line.startsWith("[[") ? 2 : 1;
        List<String> keys = new ArrayList<>();
        parseKey(line, start, keys);
        return keys;
    }

    /** The dotted key a {@code key = value} line sets, or none for a blank, comment or continuation line. */
    private static List<String> key(String line) {
        if (line.isEmpty() || line.startsWith("#")) {
            return List.of();
        }
        List<String> keys = new ArrayList<>();
        int end = parseKey(line, 0, keys);
        return end >= 0 && end < line.length() && line.charAt(end) == '=' ? keys : List.of();
    }

    /** Reads a dotted key from {@code start}; returns the index after it (and its spaces), or -1. */
    private static int parseKey(String line, int start, List<String> keys) {
        int i = start;
        while (true) {
            while (i < line.length() && (line.charAt(i) == ' ' || line.charAt(i) == '\t')) {
                i++;
            }
            if (i >= line.length()) {
                return -1;
            }
            char c = line.charAt(i);
            if (c == '"' || c == '\'') {
                StringBuilder key = new StringBuilder();
                int j = i + 1;
                while (j < line.length() && line.charAt(j) != c) {
                    if (c == '"' && line.charAt(j) == '\\' && j + 1 < line.length()) {
                        j++;
                    }
                    key.append(line.charAt(j));
                    j++;
                }
                if (j >= line.length()) {
                    return -1;
                }
                keys.add(key.toString());
                i = j + 1;
            } else {
                int j = i;
                while (j < line.length() && (Character.isLetterOrDigit(line.charAt(j)) || line.charAt(j) == '_'
                        || line.charAt(j) == '-')) {
                    j++;
                }
                if (j == i) {
                    return -1;
                }
                keys.add(line.substring(i, j));
                i = j;
            }
            while (i < line.length() && (line.charAt(i) == ' ' || line.charAt(i) == '\t')) {
                i++;
            }
            if (i < line.length() && line.charAt(i) == '.') {
                i++;
                continue;
            }
            return i;
        }
    }

    /** A TOML basic string. */
    static String string(String value) {
        StringBuilder quoted = new StringBuilder("\"");
        for (char c : value.toCharArray()) {
            switch (c) {
                case '"' -> quoted.append("\\\"");
                case '\\' -> quoted.append("\\\\");
                case '\n' -> quoted.append("\\n");
                case '\r' -> quoted.append("\\r");
                case '\t' -> quoted.append("\\t");
                default -> {
                    if (c < 0x20 || c == 0x7f) {
                        quoted.append(String.format("\\u%04x", (int) c));
                    } else {
                        quoted.append(c);
                    }
                }
            }
        }
        return quoted.append('"').toString();
    }
}
