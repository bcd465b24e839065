package dev.execache.benchmarks.jmh;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.execache.core.CachePolicy;
import dev.execache.core.CacheStatus;
import dev.execache.core.CachedExecutor;
import dev.execache.core.ExecutionOutcome;
import dev.execache.core.ExecutionRequest;
import dev.execache.core.ExecutionResult;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.spi.CacheEntry;
import dev.execache.store.memory.MemoryCacheStore;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/**
 * The cache hit path: key derivation (SHA-256 of the code, canonical context and tool
 * versions) plus a memory-store get, and the memory store's get alone, beside a
 * ConcurrentHashMap and a Caffeine lookup of the same precomputed key.
 */
public class HitPathBenchmark extends AverageTimeBenchmark {

    @Param({"1024", "65536"})
    public int codeBytes;

    private CachedExecutor executor;
    private ExecutionRequest request;
    private String key;
    private MemoryCacheStore store;
    private ConcurrentHashMap<String, CacheEntry> map;
    private Cache<String, CacheEntry> caffeine;

    @Setup
    public void setUp() {
        String code = "return " + "1 + ".repeat(codeBytes / 4) + "0;";
        code = code.substring(code.length() - codeBytes);
        request = ExecutionRequest.of(code, Map.of("limit", 10, "user", "ada", "tags", List.of("a", "b")));
        store = new MemoryCacheStore(100, Clock.systemUTC());
        executor = CachedExecutor.builder((r, tools) -> ExecutionResult.success("{\"answer\":42}", "", Duration.ofMillis(40)), store).toolVersions(new MutableToolVersions(Map.of("github", "v1"))).cachePolicy(CachePolicy.DEFAULTS.withTtl(Duration.ofDays(1))).build();
        ExecutionOutcome first = executor.execute(request);
        key = first.key();
        ExecutionOutcome second = executor.execute(request);
        if (second.status() != CacheStatus.HIT) {
            throw new IllegalStateException("benchmark setup expected a hit, got " + second.status());
        }
        CacheEntry entry = store.peek(key).orElseThrow();
        map = new ConcurrentHashMap<>(Map.of(key, entry));
        caffeine = Caffeine.newBuilder().maximumSize(100).build();
        caffeine.put(key, entry);
    }

    @Benchmark
    public ExecutionOutcome execacheHit() {
        return executor.execute(request);
    }

    @Benchmark
    public Optional<CacheEntry> memoryStoreGet() {
        return store.get(key);
    }

    @Benchmark
    public CacheEntry concurrentHashMapGet() {
        return map.get(key);
    }

    @Benchmark
    public Optional<CacheEntry> caffeineGetIfPresent() {
        return Optional.ofNullable(caffeine.getIfPresent(key));
    }
}
