package dev.execache.store.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.core.CacheStats;
import dev.execache.core.CachedExecutor;
import dev.execache.core.ExecutionResult;
import dev.execache.core.ToolCallRequest;
import dev.execache.core.CachedTool;
import dev.execache.core.MutableClock;
import dev.execache.core.ToolResult;
import dev.execache.core.spi.Counter;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.api.options.KeysScanOptions;
import org.redisson.api.redisnode.RedisNodes;
import org.redisson.config.Config;

/**
 * Redis with a maxmemory that evicts by itself: execache says when the policy would lose its
 * own keys, and under a policy it supports the figures stay true however many entries Redis drops.
 */
class RedisEvictionPolicyTest {
    private static final String PREFIX = "execache:";
    private static final int CALLS = 300;

    private final Logger logger = Logger.getLogger(RedisCacheStore.class.getName());
    private final List<LogRecord> warnings = new CopyOnWriteArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord record) {
            // Only what this test is about: an unsigned store also warns once when it opens.
            if (record.getLevel().intValue() >= Level.WARNING.intValue() && record.getMessage().contains("maxmemory")) {
                warnings.add(record);
            }
        }

        @Override public void flush() { }
        @Override public void close() { }
    };

    @BeforeEach
    void captureWarnings() {
        logger.addHandler(capture);
    }

    @AfterEach
    void stopCapturing() {
        logger.removeHandler(capture);
    }

    @Test
    void underVolatileLruHitsAndMissesAddUpToTheCallsAndEntriesToWhatRedisHolds() throws Exception {
        try (RedisServerProcess redis = RedisServerProcess.start("--maxmemory", "3mb", "--maxmemory-policy", "volatile-lru");
                RedisCacheStore store = RedisCacheStore.connect(
                        settings(redis).withMaxEntries(100_000), new MutableClock(Instant.now()))) {
            store.checks().evictionPolicy().get(10, TimeUnit.SECONDS);
            String big = "\"" + "x".repeat(16 * 1024) + "\"";
            CachedTool tool = CachedTool.builder((name, args) -> ToolResult.ok(big), store).build();

            for (int i = 0; i < CALLS; i++) {
                tool.call(ToolCallRequest.of("read", Map.of("page", i % 150))).result();
            }
            // Redis evicts whenever its memory is over the bound, even for a reading client's
            // buffers: lifted now, what it holds stays put while it is compared.
            RedissonClient admin = admin(redis);
            long held;
            try {
                admin.getRedisNodes(RedisNodes.SINGLE).getInstance().setConfig("maxmemory", "0");
                held = admin.getKeys().getKeysStream(KeysScanOptions.defaults().pattern(KeyLayout.of(PREFIX).entryPattern())).count();
            } finally {
                admin.shutdown();
            }

            CacheStats stats = CacheStats.of(store);
            assertThat(stats.hits() + stats.misses()).as("every call counted once").isEqualTo(CALLS);
            assertThat(stats.evictions()).as("Redis did evict (the test would prove nothing otherwise)").isPositive();
            assertThat(stats.entries()).as("entries as Redis holds them").isEqualTo(held);
            assertThat(runsOn(store).policy().stats().entries()).as("entries as cache_stats counts them").isEqualTo(held);
            assertThat(store.entriesEstimatedBecause()).as("exact under a policy that keeps execache's own keys").isEmpty();
            assertThat(stats.tools().get("read").hits() + stats.tools().get("read").misses()).isEqualTo(CALLS);
            assertThat(warnings).isEmpty();
        }
    }

    /**
     * The figures under every eviction policy, on a Redis at its maxmemory: sampled every 50
     * calls and after the last (eviction held off while a sample is read, so that what is
     * compared stays put), none is ever below zero or above the bound; under {@code allkeys-*}
     * they say they are estimates and stay within what Redis holds, under the others the
     * entries are what Redis holds.
     */
    @ParameterizedTest
    @ValueSource(strings = {"allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru", "volatile-lfu",
            "volatile-random", "volatile-ttl", "noeviction"})
    void theFiguresAreNeverNegativeNorAboveTheBoundAndStayWithinWhatRedisHolds(String policy) throws Exception {
        int bound = 100;
        int valueLength = 40 * 1024;
        try (RedisServerProcess redis = RedisServerProcess.start("--maxmemory", "2mb", "--maxmemory-policy", policy);
                RedisCacheStore store = RedisCacheStore.connect(settings(redis).withMaxEntries(bound),
                        new MutableClock(Instant.now()))) {
            String big = "\"" + "x".repeat(valueLength) + "\"";
            CachedTool tool = CachedTool.builder((name, args) -> ToolResult.ok(big), store).build();
            CachedExecutor runs = runsOn(store);
            boolean estimated = policy.startsWith("allkeys-");
            assertThat(store.entriesEstimatedBecause()).as("said to be estimates only where they are").isEqualTo(
                    estimated ? java.util.Optional.of("Redis's maxmemory-policy " + policy + " may evict execache's indexes")
                            : java.util.Optional.empty());
            RedissonClient admin = admin(redis);
            try {
                for (int i = 0; i < CALLS; i++) {
                    // half over 60 pages, half over 3 hot ones
                    tool.call(ToolCallRequest.of("read", Map.of("page", i % 2 == 0 ? i % 60 : 1000 + i % 3))).result();
                    if (i % 50 == 49) {
                        sampleFigures(store, runs, admin, bound, valueLength, estimated);
                    }
                }
                sampleFigures(store, runs, admin, bound, valueLength, estimated);
            } finally {
                admin.shutdown();
            }
        }
    }

    /** Holds eviction off (maxmemory 0) while the figures and what Redis holds are read, then puts it back. */
    /** An executor on the store, for the figures serve's cache_stats gives (its policy's stats). */
    private static CachedExecutor runsOn(RedisCacheStore store) {
        return CachedExecutor.builder((request, tools) -> ExecutionResult.success("1", "", Duration.ZERO), store).build();
    }

    /** As {@code stats} and {@code cache_stats} count them: the store's size and the executor policy's figures. */
    private static void sampleFigures(RedisCacheStore store, CachedExecutor runs, RedissonClient admin, int bound,
            int valueLength, boolean estimated) {
        var node = admin.getRedisNodes(RedisNodes.SINGLE).getInstance();
        node.setConfig("maxmemory", "0");
        try {
            long entries = store.size();
            long asCacheStats = runs.policy().stats().entries();
            long bytes = store.estimatedBytes();
            long held = admin.getKeys().getKeysStream(KeysScanOptions.defaults().pattern(store.layout().entryPattern())).count();
            assertThat(asCacheStats).as("entries as cache_stats counts them").isEqualTo(entries);
            assertThat(entries).as("entries").isBetween(0L, (long) bound);
            assertThat(bytes).as("estimated bytes").isBetween(0L, held * (2L * valueLength + 4096));
            if (estimated) {
                assertThat(entries).as("entries, at most what Redis holds").isLessThanOrEqualTo(held);
            } else {
                assertThat(entries).as("entries, what Redis holds").isEqualTo(held);
            }
        } finally {
            node.setConfig("maxmemory", "2mb");
        }
    }

    /**
     * Under {@code noeviction} a full Redis refuses every write but still reads: what it holds
     * is served (a hit it cannot count is a hit all the same), nothing makes the process skip it,
     * the counts it refuses are kept by the process, and its entries are what it holds. Its
     * warnings say it refuses writes, never that it cannot be reached.
     */
    @Test
    void underNoevictionAFullRedisServesWhatItHoldsAndItsFiguresStayTrue() throws Exception {
        Logger core = Logger.getLogger("dev.execache.core");
        List<LogRecord> coreLines = new CopyOnWriteArrayList<>();
        Handler coreCapture = new Handler() {
            @Override public void publish(LogRecord record) {
                coreLines.add(record);
            }
            @Override public void flush() { }
            @Override public void close() { }
        };
        core.addHandler(coreCapture);
        try (RedisServerProcess redis = RedisServerProcess.start("--maxmemory", "2mb", "--maxmemory-policy", "noeviction");
                RedisCacheStore store = RedisCacheStore.connect(
                        settings(redis).withMaxEntries(100_000), new MutableClock(Instant.now()))) {
            String big = "\"" + "x".repeat(16 * 1024) + "\"";
            AtomicInteger ran = new AtomicInteger();
            CachedTool tool = CachedTool.builder((name, args) -> {
                ran.incrementAndGet();
                return ToolResult.ok(big);
            }, store).build();

            int pages = CALLS / 2;
            for (int i = 0; i < CALLS; i++) {
                tool.call(ToolCallRequest.of("read", Map.of("page", i % pages))).result();
            }
            long held;
            RedissonClient admin = admin(redis);
            try {
                held = admin.getKeys().getKeysStream(KeysScanOptions.defaults().pattern(KeyLayout.of(PREFIX).entryPattern())).count();
            } finally {
                admin.shutdown();
            }

            assertThat(held).as("Redis filled up: some results stored, not all").isBetween(1L, pages - 1L);
            assertThat(ran.get()).as("the second round ran only what Redis did not hold").isEqualTo(CALLS - held);
            var read = tool.policy().stats().get("read");
            assertThat(read.hits()).as("every result Redis holds was a hit in the second round").isEqualTo(held);
            assertThat(read.hits() + read.misses()).as("every call counted once, though Redis refused the counts")
                    .isEqualTo(CALLS);
            assertThat(CacheStats.of(store).entries()).as("entries as Redis holds them").isEqualTo(held);
            List<String> warnings = coreLines.stream().filter(line -> line.getLevel().intValue() >= Level.WARNING.intValue())
                    .map(LogRecord::getMessage).toList();
            // at its limit a full Redis may take a small write now and then (a counter), which ends the
            // outage, and refuse the next: each such spell is warned once; never as unreachable or slow
            assertThat(warnings).as("the warnings").isNotEmpty().allSatisfy(line -> assertThat(line)
                    .startsWith("cache store refuses writes").contains("is full: maxmemory reached").doesNotContain("\n"));
        } finally {
            core.removeHandler(coreCapture);
        }
    }

    @Test
    void aPolicyThatMayEvictExecachesOwnKeysIsWarnedAboutOnceInOneLine() throws Exception {
        try (RedisServerProcess redis = RedisServerProcess.start("--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru");
                RedisCacheStore first = RedisCacheStore.connect(settings(redis), new MutableClock(Instant.now()));
                RedisCacheStore second = RedisCacheStore.open(settings(redis), new MutableClock(Instant.now()))) {
            first.checks().evictionPolicy().get(10, TimeUnit.SECONDS);
            second.checks().evictionPolicy().get(10, TimeUnit.SECONDS);

            assertThat(first.entriesEstimatedBecause()).as("its count of entries says it is an estimate")
                    .hasValueSatisfying(why -> assertThat(why).contains("allkeys-lru"));
            assertThat(warnings).hasSize(1);
            String warning = warnings.get(0).getMessage();
            assertThat(warning).doesNotContain("\n").contains("maxmemory-policy allkeys-lru")
                    .contains("noeviction").contains("volatile-lru");
        }
    }

    @Test
    void aRedisThatRefusesConfigIsUsedWithoutAWarning() throws Exception {
        try (RedisServerProcess redis = RedisServerProcess.start("--rename-command", "CONFIG", "\"\"",
                "--maxmemory-policy", "allkeys-lru");
                RedisCacheStore store = RedisCacheStore.connect(settings(redis), new MutableClock(Instant.now()))) {
            store.checks().evictionPolicy().handle((ignored, error) -> null).get(10, TimeUnit.SECONDS);
            store.counters().increment(Counter.HITS, 1);

            assertThat(store.counters().totals().get(Counter.HITS)).isEqualTo(1L);
            assertThat(warnings).isEmpty();
        }
    }

    /** A generous budget: the machine running the tests may be busy, and no test here is about time. */
    private static RedisStoreSettings settings(RedisServerProcess redis) {
        return RedisStoreSettings.of(redis.url()).withTimeout(Duration.ofSeconds(30));
    }

    private static RedissonClient admin(RedisServerProcess redis) {
        Config config = new Config();
        config.useSingleServer().setAddress(redis.url()).setConnectionMinimumIdleSize(1).setConnectionPoolSize(1);
        return Redisson.create(config);
    }
}
