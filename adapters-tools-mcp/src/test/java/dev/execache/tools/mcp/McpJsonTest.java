package dev.execache.tools.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.spec.McpSchema;
import org.junit.jupiter.api.Test;

class McpJsonTest {

    /**
     * The warm-up's failures are only logged (it moves a cost, nothing depends on it): this is where a change of the
     * SDK's types that it no longer reads shows.
     */
    @Test
    void theWarmUpReadsEveryPartOfAToolAsTheSdkTypesIt() throws Exception {
        McpSchema.ListToolsResult listed = McpJson.warmUp();

        assertThat(listed.tools()).singleElement().satisfies(tool -> {
            assertThat(tool.name()).isEqualTo("read");
            assertThat(tool.inputSchema()).containsKey("properties");
            assertThat(tool.outputSchema()).containsKey("properties");
            assertThat(tool.annotations().readOnlyHint()).isTrue();
            assertThat(tool.meta()).containsEntry("a", 1);
        });
    }
}
