package dev.execache.store.sqlite;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ToolVersionsJsonTest {
    @Test
    void writesSortedCompactJson() {
        assertThat(ToolVersionsJson.write(Map.of("sql", "3", "github", "v1"))).isEqualTo("{\"github\":\"v1\",\"sql\":\"3\"}");
        assertThat(ToolVersionsJson.write(Map.of())).isEqualTo("{}");
    }

    @Test
    void readsBackWhatItWrote() {
        Map<String, String> tricky = Map.of(
                "quote\"and\\backslash", "new\nline\ttab\r",
                "control\u0001\u001f", "/slash",
                "tøøl ✓ 😀", "");

        assertThat(ToolVersionsJson.read(ToolVersionsJson.write(tricky))).isEqualTo(tricky);
    }

    @Test
    void readsJsonWrittenByOthers() {
        assertThat(ToolVersionsJson.read(" { \"a\" : \"1\" , \"b\\u00e9\\/\":\"x\\\"y\" } "))
                .isEqualTo(Map.of("a", "1", "bé/", "x\"y"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "[]", "{", "{\"a\"}", "{\"a\":1}", "{\"a\":\"1\",}", "{\"a\":\"1\"} x", "{\"a\":\"\\q\"}",
            "{\"a\":\"\\u12\"}", "{\"a\":\"1"})
    void refusesWhatIsNotAFlatObjectOfStrings(String json) {
        assertThatThrownBy(() -> ToolVersionsJson.read(json))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tool_versions");
    }
}
