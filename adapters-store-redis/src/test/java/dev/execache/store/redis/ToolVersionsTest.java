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
    void theFieldIsAJsonObjectTheScriptsCanRead() {
        assertThat(ToolVersions.encode(Map.of("sql", "3", "github", "v\"1"))).isEqualTo("{\"github\":\"v\\\"1\",\"sql\":\"3\"}");
        assertThat(ToolVersions.encode(Map.of())).isEqualTo("{}");
        assertThat(ToolVersions.decode("{}")).isEmpty();
    }

    @Test
    void entriesWrittenBeforeJsonAreStillRead() {
        assertThat(ToolVersions.decode("")).isEmpty();
        assertThat(ToolVersions.decode("6:github2:v14:3:x10:")).isEqualTo(Map.of("github", "v1", "3:x1", ""));
    }
}
