package dev.execache.core;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
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

    /** ECMAScript Number.prototype.toString for a finite double, as RFC 8785 requires. */
    static String formatDouble(double d) {
        if (d == 0) {
            return "0";
        }
        if (d == Math.rint(d) && Math.abs(d) < 1e21) {
            return new BigDecimal(d).toBigInteger().toString();
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

    /** The decimal with the fewest significant digits that reads back as exactly {@code d}. */
    private static BigDecimal shortest(double d) {
        BigDecimal exact = new BigDecimal(d);
        for (int precision = 1; precision <= 17; precision++) {
            BigDecimal candidate = exact.round(new MathContext(precision));
            if (candidate.doubleValue() == d) {
                return candidate.stripTrailingZeros();
            }
        }
        return new BigDecimal(Double.toString(d)).stripTrailingZeros();
    }
}
