package dev.execache.benchmarks.jmh;

import dev.execache.core.CachedTool;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.ToolCallRequest;
import dev.execache.core.ToolResult;
import dev.execache.store.memory.MemoryCacheStore;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Setup;

/**
 * A tool-call hit on the memory store: canonical arguments, the key, the store read and the
 * counters, as an agent's repeated {@code read} call pays it.
 */
public class ToolCallHitBenchmark extends AverageTimeBenchmark {
    private CachedTool cached;
    private final Map<String, Object> args = Map.of("path", "src/main/App.java", "lines", List.of(1, 200));

    @Setup
    public void setUp() {
        MemoryCacheStore store = new MemoryCacheStore(100, Clock.systemUTC());
        cached = CachedTool.builder((tool, arguments) -> ToolResult.ok("{\"text\":\"" + "x".repeat(1000) + "\"}"), store)
                .toolVersions(new MutableToolVersions(Map.of("read_file", "v1")))
                .build();
        cached.call(ToolCallRequest.of("read_file", args)).result();
    }

    @Benchmark
    public ToolResult toolCallHit() {
        return cached.call(ToolCallRequest.of("read_file", args)).result();
    }
}
