package dev.execache.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.core.spi.Counter;
import dev.execache.core.spi.StoreCounters;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The bookkeeping every store shares, named once in the SPI. */
class StoreCountersRowsTest {
    @Test
    void aToolsAndAnAgentsRowsReadBackUnderTheirNames() {
        Map<String, Map<Counter, Long>> byTool = new TreeMap<>();
        StoreCounters.addRow(StoreCounters.toolRow(Counter.HITS, "github:list:commits"), 3, StoreCounters.TOOL_ROW, byTool);
        StoreCounters.addRow(StoreCounters.toolRow(Counter.HITS, "github:list:commits"), 2, StoreCounters.TOOL_ROW, byTool);
        StoreCounters.addRow(StoreCounters.agentRow(Counter.HITS, "claude"), 7, StoreCounters.TOOL_ROW, byTool);
        StoreCounters.addRow("tool:NOT_A_COUNTER:x", 1, StoreCounters.TOOL_ROW, byTool);
        StoreCounters.addRow("since", 1, StoreCounters.TOOL_ROW, byTool);

        assertThat(byTool).containsOnlyKeys("github:list:commits");
        assertThat(byTool.get("github:list:commits")).containsEntry(Counter.HITS, 5L).containsEntry(Counter.MISSES, 0L);
        assertThat(StoreCounters.nameInRow(StoreCounters.agentRow(Counter.MISSES, "a:b"), StoreCounters.AGENT_ROW))
                .isEqualTo("a:b");
    }

    @Test
    void noCountsHasEveryCounterAtZeroAndCanBeAddedTo() {
        Map<Counter, Long> counts = StoreCounters.noCounts();
        counts.merge(Counter.HITS, 1L, Long::sum);

        assertThat(counts).hasSize(Counter.values().length).containsEntry(Counter.HITS, 1L);
    }

    @Test
    void agentsPastTheCapAreCountedAsOtherAndOtherDoesNotTakeAPlace() {
        Set<String> counted = new HashSet<>(List.of(StoreCounters.OTHER_AGENT));
        IntStream.range(0, StoreCounters.MAX_AGENTS - 1).forEach(i -> counted.add("agent-" + i));

        assertThat(StoreCounters.countedAs(counted, "last")).isEqualTo("last");
        counted.add("last");
        assertThat(StoreCounters.countedAs(counted, "one-more")).isEqualTo(StoreCounters.OTHER_AGENT);
        assertThat(StoreCounters.countedAs(counted, "agent-0")).as("counted already").isEqualTo("agent-0");
        assertThat(StoreCounters.countedAs(counted, StoreCounters.OTHER_AGENT)).isEqualTo(StoreCounters.OTHER_AGENT);
    }
}
