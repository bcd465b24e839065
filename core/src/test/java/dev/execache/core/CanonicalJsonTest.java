package dev.execache.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Arrays;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class CanonicalJsonTest {

    @Test
    void objectKeysAreSortedAtEveryDepth() {
        Map<String, Object> inner = new LinkedHashMap<>();
        inner.put("z", 1);
        inner.put("a", List.of(Map.of("y", true, "b", false)));
        Map<String, Object> outer = new LinkedHashMap<>();
        outer.put("b", inner);
        outer.put("a", null);

        assertThat(CanonicalJson.write(outer, "context"))
                .isEqualTo("{\"a\":null,\"b\":{\"a\":[{\"b\":false,\"y\":true}],\"z\":1}}");
    }

    @Test
    void keysAreOrderedByUtf16CodeUnits() {
        Map<String, Object> map = Map.of("\u20ac", 1, "\r", 2, "\ud83d\ude00", 3, "1", 4, "\u0080", 5, "\u00f6", 6);

        assertThat(CanonicalJson.write(map, "context"))
                .isEqualTo("{\"\\r\":2,\"1\":4,\"\u0080\":5,\"\u00f6\":6,\"\u20ac\":1,\"\ud83d\ude00\":3}");
    }

    @Test
    void sameNumberInAnyJavaTypeIsWrittenTheSame() {
        for (Object one : List.of(1, 1L, 1.0, 1.0f, (short) 1, (byte) 1, new BigDecimal("1.000"), BigInteger.ONE)) {
            assertThat(CanonicalJson.write(one, "n")).as(one.getClass().getSimpleName()).isEqualTo("1");
        }
        assertThat(CanonicalJson.write(-0.0, "n")).isEqualTo("0");
    }

    @ParameterizedTest
    @CsvSource({
        "0.1, 0.1",
        "123.456, 123.456",
        "1e21, 1e+21",
        "1e20, 100000000000000000000",
        "1e-6, 0.000001",
        "1e-7, 1e-7",
        "-1.5e-7, -1.5e-7",
        "4.5, 4.5",
        "2e-3, 0.002",
        "333333333.33333329, 333333333.3333333",
        "1.7976931348623157e308, 1.7976931348623157e+308",
        "5e-324, 5e-324",
        "9007199254740993, 9007199254740992",
        "0.30000000000000004, 0.30000000000000004",
    })
    void numbersAreWrittenAsEcmaScriptDoes(String input, String expected) {
        assertThat(CanonicalJson.write(new BigDecimal(input), "n")).isEqualTo(expected);
    }

    @Test
    void stringsEscapeOnlyWhatRfc8785Escapes() {
        assertThat(CanonicalJson.write("a\"b\\c\n\t\b\f\r\u0001\u001f é € 😀 </>", "s"))
                .isEqualTo("\"a\\\"b\\\\c\\n\\t\\b\\f\\r\\u0001\\u001f é € 😀 </>\"");
    }

    @Test
    void nanAndInfinityAreRejectedNamingWhereTheyAre() {
        Map<String, Object> context = Map.of("items", List.of(1, 2, Double.NaN));

        assertThatThrownBy(() -> CanonicalJson.write(context, "context"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("context.items[2]: NaN");
        assertThatThrownBy(() -> CanonicalJson.write(Map.of("x", Double.NEGATIVE_INFINITY), "context"))
                .hasMessageStartingWith("context.x: -Infinity");
    }

    @Test
    void unsupportedTypesAreRejectedNamingTheirPath() {
        Map<String, Object> context = Map.of("items", Arrays.asList("a", "b", new Date(0)));

        assertThatThrownBy(() -> CanonicalJson.write(context, "context"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("context.items[2]: unsupported type java.util.Date");
    }

    @Test
    void nonStringKeysAreRejected() {
        assertThatThrownBy(() -> CanonicalJson.write(Map.of("a", Map.of(1, "x")), "context"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("context.a: object key 1 is a java.lang.Integer");
    }
}
