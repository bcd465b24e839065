package dev.execache.core.spi;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;

/**
 * What an MCP 2026-07-28 result says of keeping it: its {@code ttlMs} and {@code cacheScope}, read one way by every
 * reader (a server's lists, its reads, execache's own relisting), so that a value one of them takes as a bound
 * another never takes as none.
 *
 * @param ttl how long the result may be kept: zero for stale at once; null when the result gives no {@code ttlMs}
 *     (or one that is not a whole number)
 * @param privateScope whether the result says {@code cacheScope: "private"}: it is the asker's own
 */
public record ResultTtl(Duration ttl, boolean privateScope) {
    /** A result that says nothing of keeping it. */
    public static final ResultTtl NONE = new ResultTtl(null, false);

    public ResultTtl {
        if (ttl != null && ttl.isNegative()) {
            throw new IllegalArgumentException("ttl must not be negative: " + ttl);
        }
    }

    /**
     * @param ttlMs the result's {@code ttlMs} as its JSON parser gives a number (null when absent or not a number);
     *     a negative one is taken as 0
     * @param cacheScope the result's {@code cacheScope} text (null when absent)
     */
    public static ResultTtl read(Number ttlMs, String cacheScope) {
        Long millis = wholeMillis(ttlMs);
        return new ResultTtl(millis == null ? null : Duration.ofMillis(Math.max(0, millis)), "private".equals(cacheScope));
    }

    /** Whether the result says it is stale at once ({@code ttlMs: 0}). */
    public boolean staleAtOnce() {
        return ttl != null && ttl.isZero();
    }

    private static Long wholeMillis(Number number) {
        if (number instanceof Long || number instanceof Integer || number instanceof Short || number instanceof Byte) {
            return number.longValue();
        }
        if (number instanceof BigInteger big) {
            return big.signum() < 0 ? 0L : big.bitLength() < 64 ? big.longValue() : Long.MAX_VALUE;
        }
        if (number instanceof BigDecimal || number instanceof Double || number instanceof Float) {
            if (!(number instanceof BigDecimal) && !Double.isFinite(number.doubleValue())) {
                return null;
            }
            BigDecimal decimal = new BigDecimal(number.toString());
            if (decimal.stripTrailingZeros().scale() <= 0) {
                return decimal.signum() < 0 ? 0L : decimal.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0
                        ? Long.MAX_VALUE : decimal.longValueExact();
            }
        }
        return null;
    }
}
