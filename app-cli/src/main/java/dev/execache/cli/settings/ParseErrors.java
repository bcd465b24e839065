package dev.execache.cli.settings;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A parser's complaint about a file, in plain words with where it is (file, line, column, key), never with the file's
 * text: parsers quote the token they stumbled on and YAML's show the whole line, and a configuration line may hold a
 * token. The one describer of every configuration format execache reads (its YAML, the clients' JSON and TOML).
 */
public final class ParseErrors {
    private static final Pattern YAML_KEY = Pattern.compile("^(\\s*)(?:-\\s+)?([A-Za-z0-9_.$-]+)\\s*:(?:\\s|$)");
    private static final Pattern TOML_KEY = Pattern.compile("^\\s*([A-Za-z0-9_.\"-]+?)\\s*=");
    private static final Pattern TOML_TABLE = Pattern.compile("^\\s*\\[\\[?\\s*([A-Za-z0-9_.\"-]+?)\\s*]]?\\s*(?:#.*)?$");

    /**
     * What a parser's words mean, first match wins; the words themselves are never shown (they may quote the text).
     * SnakeYAML's (execache.yaml), Jackson's JSON parser's (the clients' JSON files) and Jackson's TOML parser's
     * (Codex's file) messages, each as its parser words it.
     */
    private static final List<String[]> PROBLEMS = List.of(
            // YAML
            new String[] {"mapping values are not allowed", "a ': ' where no key can start (quote a value that holds ': ')"},
            new String[] {"could not find expected ':'", "a key without ':' after it"},
            new String[] {"expected <block end>, but found '}'", "a '}' that closes nothing"},
            new String[] {"expected <block end>, but found ']'", "a ']' that closes nothing"},
            new String[] {"expected <block end>, but found '-'", "a '- ' list entry that does not fit the lines above"
                    + " (check its indentation)"},
            new String[] {"expected <block end>, but found '<block sequence start>'", "a '- ' list entry that does not"
                    + " fit the lines above (check its indentation)"},
            new String[] {"expected <block end>, but found '<scalar>'", "text where the value above has ended (check"
                    + " the indentation, or quote the whole value)"},
            new String[] {"expected <block end>", "the indentation does not fit the lines above"},
            new String[] {"(tab)' that cannot start any token", "a tab (YAML indents with spaces, not"
                    + " tabs)"},
            new String[] {"cannot start any token", "a character that cannot start a value (quote a value that starts"
                    + " with @ or `)"},
            new String[] {"expected ',' or ']'", "a [ ] list that is not closed"},
            new String[] {"expected ',' or '}'", "a { } mapping that is not closed"},
            new String[] {"while scanning a quoted scalar", "a quoted value that is not closed"},
            new String[] {"expected escape sequence", "an unknown escape (\\) in a quoted value"},
            new String[] {"undefined alias", "an alias (*name) that names no anchor"},
            new String[] {"while scanning an alias", "a '*' without the name of an anchor (quote a value that starts"
                    + " with *)"},
            new String[] {"while scanning an anchor", "a '&' without a name (quote a value that starts with &)"},
            new String[] {"expected a field name", "a list or mapping where a key should be"},
            // TOML
            new String[] {"newline not permitted here", "the line ends too early (a quote, a [ or a { that is not"
                    + " closed, or a key without '= value')"},
            new String[] {"trailing comma not permitted", "a ',' after the last entry of a { } table"},
            new String[] {"more data after value has already ended", "more after a value on its line (a ',' missing"
                    + " between two entries, or text that needs quotes)"},
            new String[] {"table redefined", "a table given twice"},
            new String[] {"path into existing", "a key given twice (as a value, then as a table)"},
            new String[] {"premature end of file", "the file ends in the middle of a value"},
            new String[] {"unknown token", "a word that is not a value here (text needs quotes)"},
            // any of them
            new String[] {"duplicate", "a key given twice"},
            new String[] {"unknown escape", "an unknown escape (\\) in a quoted value"},
            new String[] {"unrecognized character escape", "an unknown escape (\\) in a quoted value"},
            new String[] {"unexpected end-of-input", "the file ends in the middle of a value"},
            new String[] {"unexpected end of", "the file ends in the middle of a value"},
            new String[] {"trailing token", "more after the end of the file's object"},
            new String[] {"unexpected close marker", "a '}' or ']' that closes nothing"},
            new String[] {"unrecognized token", "a word that is not a value here (text needs quotes)"},
            new String[] {"non-standard token", "a word that is not a value here (text needs quotes)"},
            new String[] {"double-quote to start field name", "a key without double quotes"},
            new String[] {"was expecting a colon", "a key without ':' after it"},
            new String[] {"illegal unquoted character", "a control character inside a quoted value"},
            new String[] {"was expecting comma", "a ',' missing between two entries"},
            new String[] {"in numeric value", "a number that is not written as JSON writes numbers"},
            new String[] {"leading zeroes not allowed", "a number that is not written as JSON writes numbers"},
            new String[] {"unexpected character", "a character that does not belong here"});

    private ParseErrors() {
    }

    /**
     * @param format what the file should be ({@code YAML}, {@code JSON}, {@code TOML})
     * @param text the file's text, to name the key the problem is under (never shown)
     */
    public static String describe(Path file, String format, String text, JacksonException e) {
        JsonLocation at = e.getLocation();
        int line = at == null ? -1 : at.getLineNr();
        StringBuilder message = new StringBuilder().append(file).append(": ");
        if (line > 0) {
            message.append("line ").append(line);
            if (at.getColumnNr() > 0) {
                message.append(", column ").append(at.getColumnNr());
            }
            message.append(": ");
        }
        message.append("not valid ").append(format).append(": ").append(problem(e.getOriginalMessage()));
        String key = format.equals("JSON") ? jsonKey(e)
                : line > 0 && text != null ? keyAt(text, line, format) : null;
        if (key != null) {
            message.append(" (under ").append(key).append(')');
        }
        return message.toString();
    }

    /**
     * What a value is, in words, for a complaint about a value of the wrong kind: the value itself is never shown, a
     * token written under the wrong key would be printed with it.
     */
    static String kindOf(JsonNode value) {
        if (value == null || value.isMissingNode() || value.isNull()) {
            return "an empty value";
        }
        if (value.isBoolean()) {
            return "true or false";
        }
        if (value.isIntegralNumber()) {
            return !value.canConvertToLong() || value.longValue() > Integer.MAX_VALUE ? "a number too large"
                    : value.longValue() < 1 ? "a number below 1" : "a whole number";
        }
        if (value.isNumber()) {
            return "a decimal number";
        }
        if (value.isArray()) {
            return "a list";
        }
        if (value.isObject()) {
            return "a mapping";
        }
        return value.asText().isBlank() ? "an empty text" : "a text";
    }

    /** A parser's complaint in plain words, without the parser's own (which may quote the text). */
    public static String problem(String parserMessage) {
        String words = parserMessage == null ? "" : parserMessage.toLowerCase(Locale.ROOT);
        for (String[] problem : PROBLEMS) {
            if (words.contains(problem[0].toLowerCase(Locale.ROOT))) {
                return problem[1];
            }
        }
        return "the parser cannot read it there";
    }

    /**
     * The key (as {@code a.b[2].c}) a JSON parser stopped in, from where it stood; null when it stood at the top. A
     * problem with a key itself is under the object that holds the key.
     */
    public static String jsonKey(JacksonException e) {
        if (!(e.getProcessor() instanceof JsonParser parser)) {
            return null;
        }
        boolean atKey = problem(e.getOriginalMessage()).contains("key without double quotes");
        Deque<String> parts = new ArrayDeque<>();
        for (JsonStreamContext at = parser.getParsingContext(); at != null && !at.inRoot(); at = at.getParent()) {
            if (at.inArray()) {
                parts.push("[" + Math.max(at.getCurrentIndex(), 0) + "]");
            } else if (at.getCurrentName() != null && !(atKey && at == parser.getParsingContext())) {
                parts.push(at.getCurrentName());
            }
        }
        StringBuilder key = new StringBuilder();
        for (String part : parts) {
            key.append(key.isEmpty() || part.startsWith("[") ? "" : ".").append(part);
        }
        return key.isEmpty() ? null : key.toString();
    }

    /** The key (as {@code a.b.c}) whose value holds {@code line}, from the keys above it; null when none is known. */
    static String keyAt(String text, int line, String format) {
        List<String> lines = text.lines().limit(line).toList();
        if (format.equals("TOML")) {
            Matcher own = lines.size() == line ? TOML_KEY.matcher(lines.get(line - 1)) : null;
            for (int i = lines.size() - 1; i >= 0; i--) {
                Matcher table = TOML_TABLE.matcher(lines.get(i));
                if (table.matches()) {
                    String name = table.group(1).replace("\"", "");
                    return i < line - 1 && own != null && own.find() ? name + "." + own.group(1).replace("\"", "") : name;
                }
            }
            return own != null && own.find() ? own.group(1).replace("\"", "") : null;
        }
        if (!format.equals("YAML")) {
            return null;
        }
        Deque<Integer> indents = new ArrayDeque<>();
        Deque<String> keys = new ArrayDeque<>();
        for (int i = 0; i < lines.size(); i++) {
            Matcher key = YAML_KEY.matcher(lines.get(i));
            if (!key.find()) {
                continue;
            }
            int indent = key.group(1).length();
            while (!indents.isEmpty() && indents.peek() >= indent) {
                indents.pop();
                keys.pop();
            }
            indents.push(indent);
            keys.push(key.group(2));
        }
        if (keys.isEmpty()) {
            return null;
        }
        List<String> path = new ArrayList<>(keys);
        Collections.reverse(path);
        return String.join(".", path);
    }
}
