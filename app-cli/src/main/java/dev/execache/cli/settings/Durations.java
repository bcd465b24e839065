package dev.execache.cli.settings;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Reads durations as people write them: {@code 500ms}, {@code 90s}, {@code 5m}, {@code 2h}, {@code 1d}; a bare number is seconds. */
public final class Durations {
    private static final Pattern DURATION = Pattern.compile("(\\d+)\\s*(ms|s|m|h|d)?");

    /** The longest duration taken: a hundred years is "forever" for a cache, and keeps time arithmetic in range. */
    static final long MAX_DAYS = 36_500;

    private Durations() {
    }

    /**
     * A duration as a person reads it: {@code 850 µs}, {@code 12.3 ms}, {@code 4.56 s}, {@code 7.5 min}.
     * Rounded half up in whole numbers, not by {@code String.format}: every command prints one, and
     * the formatter's first use in a process cost more than the cache hit it reported.
     */
    public static String human(Duration duration) {
        long nanos = duration.toNanos();
        if (nanos < 1_000_000) {
            return nanos / 1_000 + " µs";
        }
        if (nanos < 1_000_000_000) {
            return decimal((nanos + 50_000) / 100_000, 1) + " ms";
        }
        if (nanos < 60_000_000_000L) {
            return decimal((nanos + 5_000_000) / 10_000_000, 2) + " s";
        }
        return decimal((nanos + 3_000_000_000L) / 6_000_000_000L, 1) + " min";
    }

    /** {@code units} of a tenth ({@code digits} 1) or a hundredth (2), written with that many decimals. */
    private static String decimal(long units, int digits) {
        long scale = digits == 1 ? 10 : 100;
        String fraction = Long.toString(units % scale);
        return units / scale + "." + "0".repeat(digits - fraction.length()) + fraction;
    }

    public static Duration parse(String text, String source) {
        return parse(text, source, "'" + text + "'");
    }

    /** A duration from a configuration file: the complaint names where, never the file's text. */
    static Duration parseInFile(String text, String source) {
        return parse(text, source, "the value");
    }

    private static Duration parse(String text, String source, String shown) {
        Matcher matcher = DURATION.matcher(text == null ? "" : text.trim());
        if (!matcher.matches()) {
            throw new UsageException(source + ": " + shown + " is not a duration (write e.g. 500ms, 90s, 5m, 2h)");
        }
        long amount;
        try {
            amount = Long.parseLong(matcher.group(1));
        } catch (NumberFormatException e) {
            throw new UsageException(source + ": " + shown + " is too large (at most " + MAX_DAYS + "d)");
        }
        String unit = matcher.group(2) == null ? "s" : matcher.group(2);
        Duration duration;
        try {
            duration = switch (unit) {
                case "ms" -> Duration.ofMillis(amount);
                case "m" -> Duration.ofMinutes(amount);
                case "h" -> Duration.ofHours(amount);
                case "d" -> Duration.ofDays(amount);
                default -> Duration.ofSeconds(amount);
            };
        } catch (ArithmeticException e) {
            throw new UsageException(source + ": " + shown + " is too large (at most " + MAX_DAYS + "d)");
        }
        if (duration.isZero()) {
            throw new UsageException(source + ": " + shown + " must be more than zero");
        }
        if (duration.compareTo(Duration.ofDays(MAX_DAYS)) > 0) {
            // Instants and nanosecond counts further on overflow past about 292 years.
            throw new UsageException(source + ": " + shown + " is too large (at most " + MAX_DAYS + "d)");
        }
        return duration;
    }

    static int positiveInt(String text, String source) {
        try {
            int value = Integer.parseInt(text.trim());
            if (value > 0) {
                return value;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new UsageException(source + ": '" + text + "' is not a positive whole number");
    }

    /** The duration as {@link #parse} reads it back, in the largest unit that is exact: {@code 5m}, {@code 90s}. */
    public static String format(Duration duration) {
        long millis = duration.toMillis();
        if (millis % 1000 != 0) {
            return millis + "ms";
        }
        long seconds = millis / 1000;
        if (seconds % 86_400 == 0) {
            return seconds / 86_400 + "d";
        }
        if (seconds % 3600 == 0) {
            return seconds / 3600 + "h";
        }
        if (seconds % 60 == 0) {
            return seconds / 60 + "m";
        }
        return seconds + "s";
    }
}
