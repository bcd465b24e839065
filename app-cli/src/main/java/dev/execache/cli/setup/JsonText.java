package dev.execache.cli.setup;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.core.util.Separators;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.execache.cli.settings.ParseErrors;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * A client's JSON (or JSONC) file as text, changed in place: only the spans setup rewrites
 * change, so a person's formatting and comments elsewhere in the file stay as they were
 * (Jackson's tree would rewrite the whole file and drop Zed's and VS Code's comments).
 */
final class JsonText {
    static final JsonMapper LENIENT = JsonMapper.builder()
            .enable(JsonReadFeature.ALLOW_JAVA_COMMENTS, JsonReadFeature.ALLOW_TRAILING_COMMA)
            // text after the file's object is a damaged file the client cannot read either, not something to keep
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();

    private final Path path;
    private final String text;
    private final String newline;
    private final String unit;

    JsonText(Path path, String text) {
        this.path = path;
        this.text = text;
        this.newline = text.contains("\r\n") ? "\r\n" : "\n";
        this.unit = indentUnit(text);
    }

    /** The file's tree; a file that is not JSON is an error naming the file and the line. */
    static JsonNode parse(Path path, String text) {
        try {
            JsonNode root = LENIENT.readTree(text);
            return root == null || root.isMissingNode() ? LENIENT.createObjectNode() : root;
        } catch (JacksonException e) {
            throw new SetupException(ParseErrors.describe(path, "JSON", text, e));
        }
    }

    /** A replacement of the value at {@code keys}, or, when it is missing, a new member of the object holding it. */
    record Change(List<String> keys, JsonNode value) {
    }

    String apply(List<Change> changes) {
        record Splice(int start, int end, String replacement) {
        }
        List<Splice> splices = new ArrayList<>();
        for (Change change : changes) {
            int[] span = span(change.keys());
            if (span != null) {
                splices.add(new Splice(span[0], span[1], write(change.value(), indentOfLineAt(span[0]))));
                continue;
            }
            List<String> parent = change.keys().subList(0, change.keys().size() - 1);
            int[] object = span(parent);
            if (object == null) {
                throw new SetupException(path + ": cannot find " + String.join(".", parent) + " to add to");
            }
            int close = object[1] - 1;
            int last = close - 1;
            while (last > object[0] && Character.isWhitespace(text.charAt(last))) {
                last--;
            }
            String memberIndent = indentOfLineAt(object[0]) + unit;
            String member = newline + memberIndent + quote(change.keys().get(change.keys().size() - 1)) + ": "
                    + write(change.value(), memberIndent);
            char before = text.charAt(last);
            if (before == '{') {
                splices.add(new Splice(last + 1, close, member + newline + indentOfLineAt(object[0])));
            } else {
                splices.add(new Splice(last + 1, last + 1, (before == ',' ? "" : ",") + member));
            }
        }
        splices.sort(Comparator.comparingInt(Splice::start).reversed());
        StringBuilder result = new StringBuilder(text);
        for (Splice splice : splices) {
            result.replace(splice.start(), splice.end(), splice.replacement());
        }
        return result.toString();
    }

    /** [start, end) of the value at these keys, or null when it is not there. */
    private int[] span(List<String> keys) {
        try (JsonParser parser = LENIENT.createParser(text)) {
            JsonToken token = parser.nextToken();
            if (keys.isEmpty()) {
                int start = (int) parser.currentTokenLocation().getCharOffset();
                parser.skipChildren();
                return new int[] {start, (int) parser.currentLocation().getCharOffset()};
            }
            return find(parser, token, keys, 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static int[] find(JsonParser parser, JsonToken token, List<String> keys, int depth) throws IOException {
        if (token != JsonToken.START_OBJECT) {
            return null;
        }
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
            String name = parser.currentName();
            JsonToken value = parser.nextToken();
            if (name.equals(keys.get(depth))) {
                if (depth == keys.size() - 1) {
                    int start = (int) parser.currentTokenLocation().getCharOffset();
                    if (value.isStructStart()) {
                        parser.skipChildren();
                    } else {
                        parser.getText();
                    }
                    return new int[] {start, (int) parser.currentLocation().getCharOffset()};
                }
                return find(parser, value, keys, depth + 1);
            }
            parser.skipChildren();
        }
        return null;
    }

    private String indentOfLineAt(int offset) {
        int lineStart = text.lastIndexOf('\n', offset - 1) + 1;
        int end = lineStart;
        while (end < text.length() && (text.charAt(end) == ' ' || text.charAt(end) == '\t')) {
            end++;
        }
        return text.substring(lineStart, end);
    }

    /** The file's own indentation step: that of its first indented line, else two spaces. */
    private static String indentUnit(String text) {
        for (String line : text.split("\n")) {
            int end = 0;
            while (end < line.length() && (line.charAt(end) == ' ' || line.charAt(end) == '\t')) {
                end++;
            }
            if (end > 0 && end < line.length()) {
                return line.substring(0, end);
            }
        }
        return "  ";
    }

    /** A value written as JSON.stringify(value, null, unit) writes it, its lines after the first indented by {@code base}. */
    private String write(JsonNode value, String base) {
        DefaultIndenter indenter = new DefaultIndenter(unit, newline + base);
        DefaultPrettyPrinter printer = new DefaultPrettyPrinter()
                .withSeparators(Separators.createDefaultInstance()
                        .withObjectFieldValueSpacing(Separators.Spacing.AFTER)
                        .withObjectEmptySeparator("")
                        .withArrayEmptySeparator(""));
        printer.indentObjectsWith(indenter);
        printer.indentArraysWith(indenter);
        try {
            return LENIENT.writer(printer).writeValueAsString(value);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String quote(String key) {
        try {
            return LENIENT.writeValueAsString(key);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
