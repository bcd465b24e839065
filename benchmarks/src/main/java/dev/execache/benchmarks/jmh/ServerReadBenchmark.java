package dev.execache.benchmarks.jmh;

import dev.execache.core.CachedTool;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.ToolCallOutcome;
import dev.execache.core.ToolCallRequest;
import dev.execache.core.ToolResult;
import dev.execache.core.spi.CacheStore;
import dev.execache.store.memory.MemoryCacheStore;
import dev.execache.store.redis.RedisCacheStore;
import dev.execache.store.redis.RedisServerProcess;
import dev.execache.store.redis.RedisStoreSettings;
import dev.execache.store.sqlite.SqliteCacheStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * A gateway read of a server whose writes are counted in the store's write generation, on each
 * store: a hit (which does not read the generation), and a miss that reads the generation, calls
 * the tool and stores its answer on condition that the generation has not moved. (Before the
 * generation moved into the store, the count was a field of the gateway: the same calls with a
 * check in memory.)
 */
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class ServerReadBenchmark extends AverageTimeBenchmark {
    @Param({"memory", "sqlite", "redis"})
    public String store;

    private CacheStore cacheStore;
    private RedisServerProcess redis;
    private Path dir;
    private CachedTool cached;
    private long miss;
    private final Map<String, Object> hitArgs = Map.of("path", "src/main/App.java");

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        cacheStore = switch (store) {
            case "memory" -> new MemoryCacheStore(1000, Clock.systemUTC());
            case "sqlite" -> {
                dir = Files.createTempDirectory("execache-bench-");
                yield new SqliteCacheStore(dir.resolve("cache.db"), 1000, Clock.systemUTC());
            }
            default -> {
                redis = RedisServerProcess.start();
                yield RedisCacheStore.connect(RedisStoreSettings.of(redis.url()), Clock.systemUTC());
            }
        };
        cached = CachedTool.builder((tool, arguments) -> ToolResult.ok("{\"text\":\"" + "x".repeat(1000) + "\"}"),
                        cacheStore)
                .toolVersions(new MutableToolVersions(Map.of("fs__read_file", "v1")))
                .build();
        read(hitArgs);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        cacheStore.close();
        if (redis != null) {
            redis.close();
        }
    }

    /** As the gateway reads a server whose writes are counted: on a miss the generation is read, and the put is on condition. */
    private ToolCallOutcome read(Map<String, Object> args) {
        return cached.call(ToolCallRequest.of("fs__read_file", args).readOf("fs"));
    }

    @Benchmark
    public ToolCallOutcome hit() {
        return read(hitArgs);
    }

    @Benchmark
    public ToolCallOutcome missAndStore() {
        return read(Map.of("path", "file-" + (miss++)));
    }
}
