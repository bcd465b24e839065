package dev.execache.benchmarks;

import dev.execache.benchmarks.library.ConcurrencyFigures;
import dev.execache.benchmarks.library.FleetFigures;
import dev.execache.benchmarks.library.HitPathFigures;
import dev.execache.benchmarks.library.SandboxFigures;
import dev.execache.benchmarks.library.WorkflowFigures;
import dev.execache.benchmarks.process.CliFigures;
import dev.execache.benchmarks.support.Artifacts;
import dev.execache.benchmarks.support.Machine;
import dev.execache.benchmarks.support.Progress;
import dev.execache.benchmarks.support.Reports;
import dev.execache.benchmarks.support.Scratch;
import dev.execache.benchmarks.support.Table;
import dev.execache.sandbox.DenoSandboxSettings;
import dev.execache.sandbox.SandboxProbe;
import dev.execache.store.memory.MemoryCacheStore;
import dev.execache.store.redis.RedisCacheStore;
import dev.execache.store.redis.RedisServerProcess;
import dev.execache.store.redis.RedisStoreSettings;
import dev.execache.store.sqlite.SqliteCacheStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Measures, in one run, each figure of execache beside the primitive a user would otherwise use,
 * and prints them as one table with the machine they ran on:
 * {@code sandbox}, {@code workflow}, {@code hitpath}, {@code fleet}, {@code cli}, {@code concurrency} (the
 * arguments choose some; none means all). Starts its own redis-server; needs Deno (installed on
 * first use) and, for {@code cli}, {@code app-cli/target/execache.jar} (or {@code -Dexecache.jar=}).
 *
 * <pre>
 * ./mvnw -B -q -DskipTests package -pl benchmarks -am &amp;&amp; \
 *     java -cp benchmarks/target/benchmarks.jar dev.execache.benchmarks.PerformanceReport
 * </pre>
 */
public final class PerformanceReport {
    private static final List<String> PARTS = List.of("sandbox", "workflow", "hitpath", "fleet", "cli", "concurrency");
    private static final int WARM_POOL_SIZE = 2;

    private PerformanceReport() {
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        Set<String> parts = Reports.parts("PerformanceReport", PARTS, args);
        Progress progress = new Progress();
        String loadAtStart = Machine.loadAverage();
        DenoSandboxSettings settings = DenoSandboxSettings.builder().warmPoolSize(WARM_POOL_SIZE).build();
        SandboxProbe probe = SandboxProbe.prepare(settings);
        String machine = Machine.describe(probe.denoVersion());
        progress.note(machine + "; load average " + loadAtStart);
        Table table = new Table();
        Path scratch = Files.createTempDirectory("execache-bench-");
        try (RedisServerProcess redis = RedisServerProcess.start()) {
            RedissonClient client = Redisson.create(redisConfig(redis.url()));
            try {
                if (parts.contains("sandbox")) {
                    progress.note("sandbox: warm pool, cold start and bare deno run, " + SandboxFigures.RUNS + " of each");
                    SandboxFigures.measure(table, probe, settings);
                }
                if (parts.contains("workflow")) {
                    WorkflowFigures.measure(table, settings, List.of(
                            new WorkflowFigures.Variant("memory store", MemoryCacheStore::new),
                            new WorkflowFigures.Variant("sqlite store (temp file)",
                                    () -> new SqliteCacheStore(scratch.resolve("workflow.db"), 1_000, Clock.systemUTC())),
                            new WorkflowFigures.Variant("redis store", () -> RedisCacheStore.connect(
                                    RedisStoreSettings.of(redis.url()).withKeyPrefix("bench-workflow:").withMaxEntries(1_000),
                                    Clock.systemUTC()))),
                            progress);
                }
                if (parts.contains("hitpath")) {
                    progress.note("hit path: memory store with JMH");
                    HitPathFigures.memory(table, scratch.resolve("jmh.log"));
                    progress.note("hit path: sqlite store vs raw JDBC");
                    HitPathFigures.sqlite(table);
                    progress.note("hit path: redis store vs RBucket.get");
                    HitPathFigures.redis(table, client);
                }
                if (parts.contains("fleet")) {
                    progress.note("fleet: redis hits on standalone and Cluster, signed and not; a paused Redis");
                    FleetFigures.hits(table);
                    FleetFigures.paused(table);
                }
            } finally {
                client.shutdown();
            }
        } finally {
            Scratch.deleteTree(scratch);
        }
        if (parts.contains("cli")) {
            Path jar = Artifacts.execacheJar();
            progress.note("cli: " + jar + ", " + CliFigures.ROUNDS + " rounds");
            CliFigures.measure(table, jar, progress);
        }
        if (parts.contains("concurrency")) {
            progress.note("concurrency: " + ConcurrencyFigures.THREADS + " threads");
            ConcurrencyFigures.measure(table, settings);
        }
        progress.note("done");
        Reports.print(machine, loadAtStart, "Sandbox warm pool: " + WARM_POOL_SIZE + " runners.", table);
        System.out.println();
        System.out.printf(Locale.ROOT, "The report took %.0f s.%n", progress.elapsedSeconds());
        // everything it started is closed, but a library thread left behind must not keep the JVM up
        System.exit(0);
    }

    /** The store's own settings where they change latency: one address, scripts by SHA. */
    private static Config redisConfig(String url) {
        Config config = new Config();
        config.setUseScriptCache(true);
        config.useSingleServer().setAddress(url);
        return config;
    }
}
