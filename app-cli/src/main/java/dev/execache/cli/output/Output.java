package dev.execache.cli.output;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.execache.cli.settings.ParseErrors;
import dev.execache.cli.settings.UsageException;
import dev.execache.gateway.Json;
import java.util.Locale;

/** What the command line reads from a person as JSON, and sizes as a person reads them. */
public final class Output {
    private Output() {
    }

    /** Parses user-given JSON into plain Java values (Map, List, String, Number, Boolean, null). */
    public static Object parseJson(String text, String source) {
        try {
            return Json.MAPPER.readValue(text, Object.class);
        } catch (JsonProcessingException e) {
            String where = e.getLocation() == null ? ""
                    : " at line " + e.getLocation().getLineNr() + ", column " + e.getLocation().getColumnNr();
            // in words, never the parser's: they quote the text, which may hold a secret
            String key = ParseErrors.jsonKey(e);
            throw new UsageException(source + ": not valid JSON" + where + ": " + ParseErrors.problem(e.getOriginalMessage())
                    + (key == null ? "" : " (under " + key + ")"));
        }
    }

    /** {@code 512 B}, {@code 1.5 KiB}, {@code 64.0 MiB}. */
    public static String bytes(long bytes) {
        if (bytes < 1024) {
            return bytes + " B";
        }
        if (bytes < 1024 * 1024) {
            return String.format(Locale.ROOT, "%.1f KiB", bytes / 1024.0);
        }
        return String.format(Locale.ROOT, "%.1f MiB", bytes / (1024.0 * 1024));
    }
}
