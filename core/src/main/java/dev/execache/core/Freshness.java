package dev.execache.core;

import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Objects;

/**
 * How fresh an answer the caller accepts, as HTTP's {@code Cache-Control} request directives say
 * it: {@code no-cache} (never a stored answer: ask again, and keep the new answer in place of the
 * stored one) or {@code max-age=SECONDS} (a stored answer at most that old). {@link #ANY} accepts
 * whatever is still within its TTL.
 *
 * @param maxAge the oldest stored answer accepted; null for any (within its TTL); zero is {@code no-cache}
 */
public record Freshness(Duration maxAge) {
    /** Any stored answer within its TTL. */
    public static final Freshness ANY = new Freshness(null);
    /** No stored answer: ask again. */
    public static final Freshness NO_CACHE = new Freshness(Duration.ZERO);

    public Freshness {
        if (maxAge != null && maxAge.isNegative()) {
            throw new IllegalArgumentException("max-age must not be negative: " + maxAge);
        }
    }

    public static Freshness maxAge(Duration maxAge) {
        return new Freshness(Objects.requireNonNull(maxAge, "maxAge must not be null"));
    }

    /**
     * Reads one directive as HTTP writes it: {@code no-cache}, or {@code max-age=N} with N whole
     * seconds (case and spaces around it do not matter).
     *
     * @throws IllegalArgumentException naming what was wrong, for anything else
     */
    public static Freshness parse(String directive) {
        if (directive == null) {
            throw new IllegalArgumentException("cache control must be \"no-cache\" or \"max-age=SECONDS\", not null");
        }
        String text = directive.strip().toLowerCase(Locale.ROOT);
        if (text.equals("no-cache")) {
            return NO_CACHE;
        }
        if (text.startsWith("max-age=")) {
            String seconds = text.substring("max-age=".length()).strip();
            if (!seconds.isEmpty() && seconds.chars().allMatch(Character::isDigit) && seconds.length() <= 12) {
                return maxAge(Duration.ofSeconds(Long.parseLong(seconds)));
            }
        }
        throw new IllegalArgumentException("cache control must be \"no-cache\" or \"max-age=SECONDS\" (whole seconds),"
                + " not \"" + directive + "\"");
    }

    /** Whether an answer stored at {@code storedAt} may be served at {@code now}. */
    public boolean accepts(Instant storedAt, Instant now) {
        if (maxAge == null) {
            return true;
        }
        if (maxAge.isZero()) {
            return false;
        }
        return Duration.between(storedAt, now).compareTo(maxAge) <= 0;
    }

    /** Whether this accepts any stored answer at all. */
    public boolean isNoCache() {
        return maxAge != null && maxAge.isZero();
    }

    /** As HTTP writes it: {@code no-cache}, {@code max-age=N}, or empty for {@link #ANY}. */
    @Override
    public String toString() {
        if (maxAge == null) {
            return "";
        }
        return maxAge.isZero() ? "no-cache" : "max-age=" + maxAge.toSeconds();
    }
}
