package dev.execache.store.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class ToolVersionsTest {

    @Test
    void namesAndVersionsWithAnyCharactersSurviveTheRoundTrip() {
        Map<String, String> tools = Map.of("mcp__db__query_rows", "12:ab", "3:x", "", "tøøl 😀", "v1 ✓\n2");

        assertThat(ToolVersions.decode(ToolVersions.encode(tools))).isEqualTo(tools);
    }

    @Test
    void noToolsIsAnEmptyField() {
        assertThat(ToolVersions.encode(Map.of())).isEmpty();
        assertThat(ToolVersions.decode("")).isEmpty();
    }
}
