package dev.execache.gateway;

import java.util.Locale;

/**
 * What serve lists in {@code tools/list}: every server's tools beside execache's own ({@link #ALL}), or execache's own
 * only ({@link #CODE}, code mode), the servers' tools then found by {@code search_tools}, described by
 * {@code describe_tools} and called from code. Either way every server's tool stays callable by its name.
 */
public enum Expose {
    ALL,
    CODE;

    /** The setting as written ({@code all} or {@code code}, any case); {@code source} names where, for the message. */
    public static Expose parse(String text, String source) {
        String value = text == null ? "" : text.strip().toLowerCase(Locale.ROOT);
        return switch (value) {
            case "all" -> ALL;
            case "code" -> CODE;
            default -> throw new IllegalArgumentException(source + ": must be all or code, not '" + text + "'");
        };
    }

    /** As the config file and the flag write it. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
