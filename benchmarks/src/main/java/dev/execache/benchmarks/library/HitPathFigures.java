package dev.execache.benchmarks.library;

import dev.execache.benchmarks.jmh.HitPathBenchmark;
import dev.execache.benchmarks.support.Samples;
import dev.execache.benchmarks.support.Table;
import dev.execache.core.spi.CacheEntry;
import dev.execache.store.redis.RedisCacheStore;
import dev.execache.store.sqlite.SqliteCacheStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;
import org.redisson.api.RBucket;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/** The hit path of each store beside the primitive under it, in the same JVM and run. */
public final class HitPathFigures {
    private HitPathFigures() {
    }

    /**
     * The memory store and the executor's whole hit path, with JMH (a forked JVM, 3 warm-up and
     * 5 measured iterations of 0.5 s, mean time per call) beside ConcurrentHashMap and Caffeine.
     */
    public static Map<String, Double> memory(Table table, Path jmhLog) throws RunnerException {
        Options options = new OptionsBuilder()
                .include(HitPathBenchmark.class.getName() + "\\.")
                .param("codeBytes", "1024")
                .warmupIterations(3).warmupTime(TimeValue.milliseconds(500))
                .measurementIterations(5).measurementTime(TimeValue.milliseconds(500))
                .forks(1)
                .verbosity(VerboseMode.NORMAL)
                .output(jmhLog.toString())
                .build();
        Collection<RunResult> results = new Runner(options).run();
        table.note("Memory store: JMH, one fork, 3 warm-up and 5 measured iterations of 0.5 s, average time per call"
                + " (a mean, not a median); the executor hit derives the key (SHA-256 of 1 KB of code, the canonical"
                + " context and the tool versions), reads the store and counts the hit.");
        Map<String, Double> nanos = new HashMap<>();
        for (RunResult result : results) {
            String benchmark = result.getParams().getBenchmark();
            nanos.put(benchmark.substring(benchmark.lastIndexOf('.') + 1), result.getPrimaryResult().getScore());
        }
        double storeGet = nanos.get("memoryStoreGet");
        double executorHit = nanos.get("execacheHit");
        double map = nanos.get("concurrentHashMapGet");
        double caffeine = nanos.get("caffeineGetIfPresent");
        table.add("memory store hit, `get(key)` (JMH mean)", Table.micros(storeGet / 1000),
                "`ConcurrentHashMap.get` " + Table.micros(map / 1000) + ", Caffeine " + Table.micros(caffeine / 1000),
                Table.times(storeGet, map) + ", " + Table.times(storeGet, caffeine), "");
        table.add("executor hit, memory store (key of 1 KB code + get + counters; JMH mean)",
                Table.micros(executorHit / 1000), "`ConcurrentHashMap.get` " + Table.micros(map / 1000),
                Table.times(executorHit, map), "");
        return nanos;
    }

    /**
     * {@link SqliteCacheStore#get} beside a raw JDBC primary-key select of the same columns from
     * the same file, prepared per call as plain JDBC code does, and the same select kept prepared
     * (as the store keeps its own: the floor of any read through JDBC); they alternate in rounds
     * of 1,000 calls on random keys of 100 entries. Medians of every call.
     */
    public static double[] sqlite(Table table) throws Exception {
        int entries = 100;
        int callsPerRound = 1_000;
        Path directory = Files.createTempDirectory("execache-bench-sqlite");
        Path file = directory.resolve("cache.db");
        Clock clock = Clock.systemUTC();
        try (SqliteCacheStore store = new SqliteCacheStore(file, 10_000, clock);
                Connection raw = DriverManager.getConnection("jdbc:sqlite:" + file);
                PreparedStatement kept = raw.prepareStatement(RAW_SELECT)) {
            Instant now = clock.instant();
            for (int i = 0; i < entries; i++) {
                store.put(new CacheEntry(Turns.key(i), StoreEntries.JSON_ROWS, "fetched 8 rows\n", Duration.ofMillis(350),
                        Map.of("github", "v1", "sql", "3"), now, now.plus(Duration.ofHours(1)), 0));
            }
            Turns.KeyedCall storeGet = key -> store.get(key).orElseThrow(() -> new IllegalStateException("miss on " + key));
            Turns.KeyedCall rawSelect = key -> {
                try (PreparedStatement select = raw.prepareStatement(RAW_SELECT)) {
                    readRow(select, key);
                }
            };
            Turns.KeyedCall keptSelect = key -> readRow(kept, key);
            List<Turns.KeyedCall> calls = List.of(storeGet, rawSelect, keptSelect);
            Turns.alternate(calls, entries, 100, callsPerRound);
            long[][] nanos = Turns.alternate(calls, entries, 150, callsPerRound);
            table.note("SQLite: one file, 100 entries, random keys; store get, a raw select (prepared per call, the"
                    + " same columns) and the same select kept prepared (as the store keeps its own) alternate call by"
                    + " call; median of every call after 100k warm-up calls.");
            double storeMicros = Samples.medianMicros(nanos[0]);
            double rawMicros = Samples.medianMicros(nanos[1]);
            double keptMicros = Samples.medianMicros(nanos[2]);
            table.add("sqlite store hit, `get(key)` (median of " + nanos[0].length / 1000 + "k)", Table.micros(storeMicros),
                    "raw JDBC primary-key select " + Table.micros(rawMicros), Table.times(storeMicros, rawMicros),
                    Table.aim("≤ 1.3x", storeMicros / rawMicros <= 1.3));
            table.add("sqlite store hit, `get(key)`", Table.micros(storeMicros),
                    "the raw select kept prepared " + Table.micros(keptMicros), Table.times(storeMicros, keptMicros), "");
            return new double[] {storeMicros, rawMicros, keptMicros};
        } finally {
            try (Stream<Path> files = Files.list(directory)) {
                for (Path left : files.toList()) {
                    Files.delete(left);
                }
            }
            Files.delete(directory);
        }
    }

    /**
     * {@link RedisCacheStore#get} beside {@code RBucket.get} of the same value on the same
     * Redisson client and server, and a one-line Lua script (the floor of any hit done in a
     * script); call by call in turns. Medians of every call.
     */
    public static void redis(Table table, RedissonClient client) throws Exception {
        String prefix = "bench-hit:";
        try (RedisCacheStore store = new RedisCacheStore(client, prefix, 100, Clock.systemUTC())) {
            store.put(StoreEntries.rows("v1:bench"));
            RBucket<String> bucket = client.getBucket(prefix + "raw", StringCodec.INSTANCE);
            bucket.set(StoreEntries.JSON_ROWS);
            RScript script = client.getScript(StringCodec.INSTANCE);
            List<Turns.KeyedCall> calls = List.of(
                    key -> store.get("v1:bench").orElseThrow(),
                    key -> bucket.get(),
                    key -> script.eval(RScript.Mode.READ_ONLY, "return redis.call('GET', KEYS[1])",
                            RScript.ReturnType.VALUE, List.of(prefix + "raw")));
            try {
                Turns.alternate(calls, 1, 10, 1_000);
                long[][] nanos = Turns.alternate(calls, 1, 30, 1_000);
                table.note("Redis: a redis-server started by the report; the store and the raw bucket share one Redisson"
                        + " client; the three calls alternate; median of every call after 10k warm-up calls.");
                double storeMicros = Samples.medianMicros(nanos[0]);
                double bucketMicros = Samples.medianMicros(nanos[1]);
                double scriptMicros = Samples.medianMicros(nanos[2]);
                table.add("redis store hit, `get(key)` (median of " + nanos[0].length / 1000 + "k)",
                        Table.micros(storeMicros), "Redisson `RBucket.get` " + Table.micros(bucketMicros),
                        Table.times(storeMicros, bucketMicros), Table.aim("≤ 1.5x", storeMicros / bucketMicros <= 1.5));
                table.add("redis one-line Lua `GET` (floor of a scripted hit)", Table.micros(scriptMicros),
                        "Redisson `RBucket.get` " + Table.micros(bucketMicros), Table.times(scriptMicros, bucketMicros), "");
            } finally {
                store.clear();
                bucket.delete();
            }
        }
    }

    private static final String RAW_SELECT = """
            SELECT cache_key, created_at, expires_at, hit_count, execution_nanos, tool_versions, result, console
              FROM cache_entries WHERE cache_key = ?""";

    private static void readRow(PreparedStatement select, String key) throws SQLException {
        select.setString(1, key);
        try (ResultSet row = select.executeQuery()) {
            if (!row.next()) {
                throw new IllegalStateException("no row for " + key);
            }
            row.getString(1);
            row.getLong(2);
            row.getLong(3);
            row.getLong(4);
            row.getLong(5);
            row.getString(6);
            row.getString(7);
            row.getString(8);
        }
    }
}
