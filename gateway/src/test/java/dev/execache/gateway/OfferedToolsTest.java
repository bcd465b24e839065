package dev.execache.gateway;

import dev.execache.core.CapturedLog;
import dev.execache.gateway.OfferedTools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.core.spi.CatalogTool;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The names the gateway's tools are offered under, and the changes serve is told. */
class OfferedToolsTest {
    private static final CatalogTool ECHO = ScriptedCatalog.tool("everything", "echo", Map.of("execution",
            Map.of("taskSupport", "optional")));
    private static final CatalogTool STATS = ScriptedCatalog.tool("everything", "cache_stats", Map.of());
    private static final CatalogTool LIST = ScriptedCatalog.tool("fs", "list", Map.of());

    /** Specifications as serve gets them, naming only the tool. */
    private static OfferedTool specify(CatalogTool tool, String offeredName) {
        return new OfferedTool(McpSchema.Tool.builder().name(offeredName).inputSchema(Map.of("type", "object")).build(),
                (request, origin) -> null);
    }

    private static Map<String, CatalogTool> byName(CatalogTool... tools) {
        Map<String, CatalogTool> now = new LinkedHashMap<>();
        for (CatalogTool tool : tools) {
            now.put(tool.name(), tool);
        }
        return now;
    }

    private static List<String> names(List<OfferedTool> specifications) {
        return specifications.stream().map(specification -> specification.tool().name()).toList();
    }

    @Test
    void aServerWithoutThePrefixKeepsItsToolsOwnNamesUnlessExecacheHasTheName() {
        OfferedTools offered = new OfferedTools(Set.of("everything"), OfferedToolsTest::specify);
        try (CapturedLog log = new CapturedLog()) {
            offered.ownTools(Set.of("execute_code", "cache_stats"));
            offered.toolsChanged(byName(ECHO, STATS, LIST));

            assertThat(names(offered.specifications())).containsExactly("echo", "everything__cache_stats", "fs__list");
            assertThat(log.lines()).contains("server everything: its tool cache_stats is offered as"
                    + " everything__cache_stats, not under its own name: execache has a tool of that name");
        }
        assertThat(offered.serverOf("echo")).isEqualTo("everything");
        assertThat(offered.offers("everything__echo")).isFalse();
        assertThat(offered.serverOf("everything__echo")).isNull();
    }

    @Test
    void serveIsToldWhatWasAddedChangedAndWithdrawn() {
        OfferedTools offered = new OfferedTools(Set.of(), OfferedToolsTest::specify);
        offered.toolsChanged(byName(ECHO, LIST));
        List<String> told = new ArrayList<>();
        offered.onChange((changed, withdrawn) -> told.add(names(changed) + " withdrawn " + withdrawn));
        CatalogTool newList = new CatalogTool(LIST.name(), LIST.server(), "v2", LIST.definition(), true, true);

        offered.toolsChanged(byName(ECHO, newList));
        offered.toolsChanged(byName(newList));
        offered.toolsChanged(byName(newList));

        assertThat(told).containsExactly("[everything__echo, fs__list] withdrawn []", "[fs__list] withdrawn []",
                "[] withdrawn [everything__echo]");
    }

    @Test
    void theFieldsTheSdksToolTypeDropsAreKeptForTheList() {
        OfferedTools offered = new OfferedTools(Set.of(), OfferedToolsTest::specify);
        offered.toolsChanged(byName(ECHO, LIST));
        offered.specifications();

        assertThat(offered.unknownFields("everything__echo")).containsExactly(Map.entry("execution",
                Map.of("taskSupport", "optional")));
        assertThat(offered.unknownFields("fs__list")).isEmpty();
        assertThat(offered.unknownFields("nothing")).isEmpty();
    }
}
