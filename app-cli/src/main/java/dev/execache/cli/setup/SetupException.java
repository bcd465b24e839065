package dev.execache.cli.setup;

import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Why setup stopped before writing anything, in words for a person (exit 2). */
public final class SetupException extends RuntimeException {
    public SetupException(String message) {
        super(message);
    }

    private static final Pattern QUOTED = Pattern.compile("'([^'\\n]{2,})'");
    private static final Set<String> PARSER_WORDS = Set.of("null", "true", "false", "NaN", "reader");

    /**
     * A parser's message about a file that may hold secrets, without the file's text: parsers quote
     * the token they stumbled on ({@code Unrecognized token 'ghp_...'}) and YAML's show the line.
     */
    static String withoutText(String parserMessage) {
        String firstLine = parserMessage == null ? "" : parserMessage.lines().findFirst().orElse("");
        Matcher quoted = QUOTED.matcher(firstLine);
        StringBuilder kept = new StringBuilder();
        while (quoted.find()) {
            quoted.appendReplacement(kept, PARSER_WORDS.contains(quoted.group(1)) ? "$0" : "'...'");
        }
        return quoted.appendTail(kept).toString();
    }
}
