package dev.execache.benchmarks.jmh;

import dev.execache.core.CachePolicy;
import dev.execache.core.CacheStatus;
import dev.execache.core.CachedExecutor;
import dev.execache.core.CachedTool;
import dev.execache.core.ExecutionOutcome;
import dev.execache.core.ExecutionRequest;
import dev.execache.core.ExecutionResult;
import dev.execache.core.Freshness;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.ToolCallOutcome;
import dev.execache.core.ToolCallRequest;
import dev.execache.core.ToolResult;
import dev.execache.core.spi.CodeToolCall;
import dev.execache.core.spi.CodeTools;
import dev.execache.store.memory.MemoryCacheStore;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Setup;

/**
 * The hit paths a server's identity is part of: a run of code that may call three servers (its
 * key holds their identities) and a gateway tool call (its version holds its server's identity),
 * each on the memory store. Written against what core had before identities too (the
 * {@code identities} method is then unused), so the same class measures both.
 */
public class AnswerIdentityBenchmark extends AverageTimeBenchmark {
    private static final Map<String, String> IDENTITIES = Map.of("github", "3f9a1c0e5d7b2a4c6e8f0a1b2c3d4e5f",
            "memory", "a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5", "fs", "0f1e2d3c4b5a69788796a5b4c3d2e1f0");

    private CachedExecutor executor;
    private ExecutionRequest request;
    private CachedTool tool;
    private final Map<String, Object> args = Map.of("path", "src/main/App.java", "lines", List.of(1, 200));

    @Setup
    public void setUp() {
        String code = "return " + "1 + ".repeat(256) + "0;";
        request = ExecutionRequest.of(code, Map.of("limit", 10, "user", "ada"));
        MemoryCacheStore store = new MemoryCacheStore(100, Clock.systemUTC());
        MutableToolVersions versions = new MutableToolVersions(Map.of("github__list_commits", "mcp:0123456789abcdef0123456789abcdef"));
        executor = CachedExecutor.builder((r, tools) -> ExecutionResult.success("{\"answer\":42}", "", Duration.ofMillis(40)), store).toolVersions(versions).cachePolicy(CachePolicy.DEFAULTS.withTtl(Duration.ofDays(1))).codeTools(new ThreeServers()).build();
        executor.execute(request);
        if (executor.execute(request).status() != CacheStatus.HIT) {
            throw new IllegalStateException("benchmark setup expected a hit");
        }
        tool = CachedTool.builder((name, arguments) -> ToolResult.ok("{\"text\":\"" + "x".repeat(1000) + "\"}"), store)
                .toolVersions(versions).build();
        tool.call(ToolCallRequest.of("github__list_commits", args)).result();
    }

    /** Three servers code may call, with their identities as the gateway keeps them (one map). */
    private static final class ThreeServers implements CodeTools {
        @Override
        public Map<String, List<String>> reachable() {
            return Map.of("github", List.of("list_commits"), "memory", List.of("read_graph"), "fs", List.of("read"));
        }

        @Override
        public Set<String> names() {
            return Set.of("github__list_commits", "memory__read_graph", "fs__read");
        }

        public Map<String, String> identities() {
            return IDENTITIES;
        }

        @Override
        public CodeToolCall call(String server, String name, String argumentsJson, String agent, Freshness freshness) {
            throw new UnsupportedOperationException("a hit calls nothing");
        }
    }

    @Benchmark
    public ExecutionOutcome runHitMayCallThreeServers() {
        return executor.execute(request);
    }

    @Benchmark
    public ToolCallOutcome toolCallHit() {
        return tool.call(ToolCallRequest.of("github__list_commits", args));
    }
}
