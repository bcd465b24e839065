package dev.execache.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class JsonSyntaxTest {

    @ParameterizedTest
    @ValueSource(strings = {"1", "-0.5e+10", "\"a\\u00e9\\n\"", "null", "true", "[]", "{}", "[1,[2,[3,{}]]]",
            "{\"a\":{\"b\":[1,\"x\",null]},\"c\":false}", " [ 1 , 2 ] "})
    void acceptsJson(String text) {
        assertThat(JsonSyntax.isValid(text)).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "undefined", "[1,]", "{\"a\":1,}", "{a:1}", "01", "1.", "\"\t\"", "[1] 2", "[",
            "{\"a\"}", "NaN", "'x'", "\"\\x\""})
    void rejectsEverythingElse(String text) {
        assertThat(JsonSyntax.isValid(text)).isFalse();
    }

    @ParameterizedTest
    @ValueSource(ints = {100_000})
    void deepNestingNeedsNoStack(int depth) {
        assertThat(JsonSyntax.isValid("[".repeat(depth) + "]".repeat(depth))).isTrue();
    }
}
