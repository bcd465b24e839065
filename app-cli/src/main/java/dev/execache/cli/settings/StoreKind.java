package dev.execache.cli.settings;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** Where results are kept. */
public enum StoreKind {
    MEMORY,
    SQLITE,
    REDIS;

    static StoreKind parse(String text, String source) {
        try {
            return valueOf(text.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new UsageException(source + ": unknown store '" + text + "' (choose one of "
                    + Arrays.stream(values()).map(StoreKind::toString).collect(Collectors.joining(", ")) + ")");
        }
    }

    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
