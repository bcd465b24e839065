package dev.execache.cli;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Reads durations as people write them: {@code 500ms}, {@code 90s}, {@code 5m}, {@code 2h}, {@code 1d}; a bare number is seconds. */
final class Durations {
    private static final Pattern DURATION = Pattern.compile("(\\d+)\\s*(ms|s|m|h|d)?");

    private Durations() {
    }

    static Duration parse(String text, String source) {
        Matcher matcher = DURATION.matcher(text == null ? "" : text.trim());
        if (!matcher.matches()) {
            throw new UsageException(source + ": '" + text + "' is not a duration (write e.g. 500ms, 90s, 5m, 2h)");
        }
        long amount;
        try {
            amount = Long.parseLong(matcher.group(1));
        } catch (NumberFormatException e) {
            throw new UsageException(source + ": '" + text + "' is too large");
        }
        String unit = matcher.group(2) == null ? "s" : matcher.group(2);
        Duration duration = switch (unit) {
            case "ms" -> Duration.ofMillis(amount);
            case "m" -> Duration.ofMinutes(amount);
            case "h" -> Duration.ofHours(amount);
            case "d" -> Duration.ofDays(amount);
            default -> Duration.ofSeconds(amount);
        };
        if (duration.isZero()) {
            throw new UsageException(source + ": '" + text + "' must be more than zero");
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
}
