package dev.execache.core;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * Writes plain Java JSON-like values (Map with String keys, List, String, Number, Boolean,
 * null) as canonical JSON following RFC 8785 (JSON Canonicalization Scheme): object keys
 * sorted by UTF-16 code units at every depth, no insignificant whitespace, numbers as
 * ECMAScript prints an IEEE double ({@code 1} and {@code 1.0} are the same number).
 *
 * <p>Numbers are compared as doubles on purpose: the sandbox hands the context to
 * JavaScript, which sees every number as a double, so two contexts that canonicalize the
 * same are the same input to the code.
 */
public final class CanonicalJson {

    private CanonicalJson() {
    }

    /**
     * Returns the canonical JSON text of {@code value}.
     *
     * @param path the name of the value in error messages, e.g. {@code "context"}
     * @throws IllegalArgumentException naming the path of an unsupported type, a non-string
     *     map key, NaN or an infinity
     */
    public static String write(Object value, String path) {
        StringBuilder out = new StringBuilder();
        write(value, path, out);
        return out.toString();
    }

    private static void write(Object value, String path, StringBuilder out) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String s) {
            writeString(s, out);
        } else if (value instanceof Boolean b) {
            out.append(b.booleanValue());
        } else if (value instanceof Number n) {
            out.append(number(n, path));
        } else if (value instanceof Map<?, ?> map) {
            writeObject(map, path, out);
        } else if (value instanceof Collection<?> list) {
            writeArray(list, path, out);
        } else if (value instanceof Object[] array) {
            writeArray(List.of(array), path, out);
        } else {
            throw new IllegalArgumentException(path + ": unsupported type " + value.getClass().getName()
                    + " (expected Map, List, String, Number, Boolean or null)");
        }
    }

    private static void writeObject(Map<?, ?> map, String path, StringBuilder out) {
        List<String> keys = new ArrayList<>(map.size());
        for (Object key : map.keySet()) {
            if (!(key instanceof String s)) {
                throw new IllegalArgumentException(path + ": object key " + key + " is a "
                        + (key == null ? "null" : key.getClass().getName()) + ", not a String");
            }
            keys.add(s);
        }
        keys.sort(null);
        out.append('{');
        for (int i = 0; i < keys.size(); i++) {
            String key = keys.get(i);
            if (i > 0) {
                out.append(',');
            }
            writeString(key, out);
            out.append(':');
            write(map.get(key), path + "." + key, out);
        }
        out.append('}');
    }

    private static void writeArray(Collection<?> list, String path, StringBuilder out) {
        out.append('[');
        int i = 0;
        for (Object item : list) {
            if (i > 0) {
                out.append(',');
            }
            write(item, path + "[" + i + "]", out);
            i++;
        }
        out.append(']');
    }

    private static void writeString(String s, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    static String number(Number n, String path) {
        double d;
        if (n instanceof BigDecimal big) {
            d = big.doubleValue();
        } else if (n instanceof BigInteger big) {
            d = big.doubleValue();
        } else {
            d = n.doubleValue();
        }
        if (Double.isNaN(d) || Double.isInfinite(d)) {
            throw new IllegalArgumentException(path + ": " + n + " is not a JSON number (NaN and Infinity are not allowed)");
        }
        return formatDouble(d);
    }

    /** Integers up to this magnitude are exact doubles with no more digits than their shortest form. */
    private static final double EXACT_INTEGERS = 0x1p53;

    /**
     * ECMAScript Number.prototype.toString for a finite double (ECMA-262, Number::toString), as
     * RFC 8785 requires: the shortest digits that read back as {@code d} (of those, the nearest
     * to it), placed as plain digits, a decimal fraction or an exponent by their magnitude.
     *
     * <p>Hand-written because {@link Double#toString(double)} is not always the shortest before
     * JDK 19 (JDK-4511638: {@code 2.0E-3} as {@code 0.0020}, some powers of two with 17 digits)
     * and this project targets Java 17; no JDK-only library does it.
     */
    static String formatDouble(double d) {
        if (d == 0) {
            return "0";
        }
        if (d == Math.rint(d) && Math.abs(d) <= EXACT_INTEGERS) {
            return Long.toString((long) d);
        }
        String sign = d < 0 ? "-" : "";
        BigDecimal shortest = shortest(Math.abs(d));
        String digits = shortest.unscaledValue().toString();
        int k = digits.length();
        int n = k - shortest.scale();
        StringBuilder out = new StringBuilder(sign);
        if (k <= n && n <= 21) {
            out.append(digits).append("0".repeat(n - k));
        } else if (0 < n && n <= 21) {
            out.append(digits, 0, n).append('.').append(digits, n, k);
        } else if (-6 < n && n <= 0) {
            out.append("0.").append("0".repeat(-n)).append(digits);
        } else {
            out.append(digits.charAt(0));
            if (k > 1) {
                out.append('.').append(digits, 1, k);
            }
            int exponent = n - 1;
            out.append('e').append(exponent < 0 ? "-" : "+").append(Math.abs(exponent));
        }
        return out.toString();
    }

    /**
     * The decimal with the fewest significant digits that reads back as exactly {@code d}; of two
     * with as few, the nearer to {@code d}, and of two as near, the one whose last digit is even.
     * Both neighbours of {@code d} at each precision are tried: the interval of decimals that read
     * back as a power of two is narrower below it than above, so the nearer one may not read back
     * while the other does.
     */
    private static BigDecimal shortest(double d) {
        BigDecimal exact = new BigDecimal(d);
        for (int precision = 1; precision <= 17; precision++) {
            BigDecimal below = exact.round(new MathContext(precision, RoundingMode.FLOOR));
            BigDecimal above = exact.round(new MathContext(precision, RoundingMode.CEILING));
            boolean belowReadsBack = below.doubleValue() == d;
            boolean aboveReadsBack = above.doubleValue() == d;
            if (belowReadsBack && aboveReadsBack) {
                int nearer = exact.subtract(below).compareTo(above.subtract(exact));
                if (nearer == 0) {
                    nearer = below.unscaledValue().testBit(0) ? 1 : -1;
                }
                return (nearer <= 0 ? below : above).stripTrailingZeros();
            }
            if (belowReadsBack) {
                return below.stripTrailingZeros();
            }
            if (aboveReadsBack) {
                return above.stripTrailingZeros();
            }
        }
        throw new IllegalStateException("no decimal of at most 17 digits reads back as " + d);
    }
}
