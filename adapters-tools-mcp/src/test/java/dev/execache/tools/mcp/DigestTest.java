package dev.execache.tools.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.spec.McpSchema;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A tool's version is a digest of what defines it, in canonical JSON. */
class DigestTest {
    private static final McpSchema.Implementation LAB = new McpSchema.Implementation("lab", "1.0.0");

    private static Map<String, Object> tool(String description, Object... schemaKeysAndValues) {
        Map<String, Object> properties = new LinkedHashMap<>();
        for (int i = 0; i < schemaKeysAndValues.length; i += 2) {
            properties.put((String) schemaKeysAndValues[i], schemaKeysAndValues[i + 1]);
        }
        Map<String, Object> definition = new LinkedHashMap<>();
        definition.put("name", "get");
        definition.put("title", "Get");
        definition.put("description", description);
        definition.put("inputSchema", Map.of("type", "object", "properties", properties));
        definition.put("annotations", Map.of("readOnlyHint", true));
        return definition;
    }

    @Test
    void theOrderOfKeysDoesNotMatter() {
        String one = ServerLifecycle.digest("lab", LAB, tool("d", "a", Map.of("type", "string"), "b", Map.of("type", "number")));
        String two = ServerLifecycle.digest("lab", LAB, tool("d", "b", Map.of("type", "number"), "a", Map.of("type", "string")));

        assertThat(one).isEqualTo(two).startsWith("mcp:").hasSize(4 + 32);
    }

    @Test
    void everyDefiningPartChangesTheDigest() {
        String base = ServerLifecycle.digest("lab", LAB, tool("d"));
        Map<String, Object> otherAnnotations = tool("d");
        otherAnnotations.put("annotations", Map.of("readOnlyHint", false));
        Map<String, Object> withOutput = tool("d");
        withOutput.put("outputSchema", Map.of("type", "object"));

        assertThat(List.of(
                ServerLifecycle.digest("lab", LAB, tool("other description")),
                ServerLifecycle.digest("lab", LAB, tool("d", "a", Map.of("type", "string"))),
                ServerLifecycle.digest("lab", LAB, otherAnnotations),
                ServerLifecycle.digest("lab", LAB, withOutput),
                ServerLifecycle.digest("lab2", LAB, tool("d")),
                ServerLifecycle.digest("lab", new McpSchema.Implementation("lab", "1.0.1"), tool("d"))))
                .doesNotContain(base).doesNotHaveDuplicates();
    }

    @Test
    void theServersIdentityIsPartOfTheVersionAndNoneLeavesItAsItWas() {
        String none = ServerLifecycle.digest("lab", LAB, tool("d"), null);

        assertThat(none).isEqualTo(ServerLifecycle.digest("lab", LAB, tool("d")));
        assertThat(ServerLifecycle.digest("lab", LAB, tool("d"), "identity-a"))
                .isNotEqualTo(none).isNotEqualTo(ServerLifecycle.digest("lab", LAB, tool("d"), "identity-b"))
                .isEqualTo(ServerLifecycle.digest("lab", LAB, tool("d"), "identity-a"));
    }

    @Test
    void theTitleIsNotPartOfTheVersion() {
        Map<String, Object> retitled = tool("d");
        retitled.put("title", "Another title");

        assertThat(ServerLifecycle.digest("lab", LAB, retitled)).isEqualTo(ServerLifecycle.digest("lab", LAB, tool("d")));
    }
}
