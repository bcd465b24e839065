package dev.execache.store.sqlite;

import dev.execache.core.CacheEntry;
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
import java.util.Arrays;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The store's hit path, {@link SqliteCacheStore#get}, beside the primitive under it: a raw
 * JDBC primary-key select of the same columns from the same file, prepared per call as plain
 * JDBC code does. Both run in turns, in the same JVM, on the same keys. Prints medians in
 * microseconds and their ratio. Not a test; from the repository root:
 *
 * <pre>
 * ./mvnw -B -q -pl adapters-store-sqlite -am -DskipTests package dependency:build-classpath \
 *     -Dmdep.outputFile=target/test-classpath.txt -Dmdep.includeScope=test
 * cd adapters-store-sqlite
 * java -cp target/test-classes:target/classes:$(cat target/test-classpath.txt) \
 *     dev.execache.store.sqlite.SqliteHitBenchmark
 * </pre>
 */
public final class SqliteHitBenchmark {
    private static final int ENTRIES = 100;
    private static final int WARMUP_CALLS = 200_000;
    private static final int ROUNDS = 200;
    private static final int CALLS_PER_ROUND = 1_000;
    private static final String RAW_SELECT = """
            SELECT cache_key, created_at, expires_at, hit_count, execution_nanos, tool_versions, result, console
              FROM cache_entries WHERE cache_key = ?""";

    private SqliteHitBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        Path directory = Files.createTempDirectory("execache-hit-benchmark");
        Path file = directory.resolve("cache.db");
        Clock clock = Clock.systemUTC();
        try (SqliteCacheStore store = new SqliteCacheStore(file, 10_000, clock);
                Connection raw = DriverManager.getConnection("jdbc:sqlite:" + file)) {
            Instant now = clock.instant();
            for (int i = 0; i < ENTRIES; i++) {
                String value = "{\"rows\":[" + "{\"id\":%d,\"name\":\"row %d\"},".formatted(i, i).repeat(8) + "{}]}";
                store.put(new CacheEntry(key(i), value, "fetched 8 rows\n", Duration.ofMillis(350),
                        Map.of("github", "v1", "sql", "3"), now, now.plus(Duration.ofHours(1)), 0));
            }
            Call storeGet = keyIndex -> {
                if (store.get(key(keyIndex)).isEmpty()) {
                    throw new IllegalStateException("miss on " + key(keyIndex));
                }
            };
            Call rawSelect = keyIndex -> select(raw, key(keyIndex));

            run(storeGet, rawSelect, WARMUP_CALLS / CALLS_PER_ROUND, new long[0], new long[0]);
            long[] storeNanos = new long[ROUNDS * CALLS_PER_ROUND];
            long[] rawNanos = new long[ROUNDS * CALLS_PER_ROUND];
            run(storeGet, rawSelect, ROUNDS, storeNanos, rawNanos);

            double storeMedian = median(storeNanos);
            double rawMedian = median(rawNanos);
            System.out.printf("sqlite store get (hit): median %.2f us, mean %.2f us%n", storeMedian, mean(storeNanos));
            System.out.printf("raw JDBC pk select:     median %.2f us, mean %.2f us%n", rawMedian, mean(rawNanos));
            System.out.printf("ratio store/raw (medians): %.2fx over %d calls each%n", storeMedian / rawMedian, storeNanos.length);
        } finally {
            try (var files = Files.list(directory)) {
                for (Path left : files.toList()) {
                    Files.delete(left);
                }
            }
            Files.delete(directory);
        }
    }

    /** Alternates rounds of each, so that drift in the machine's speed falls on both alike. */
    private static void run(Call storeGet, Call rawSelect, int rounds, long[] storeNanos, long[] rawNanos)
            throws SQLException {
        SplittableRandom random = new SplittableRandom(42);
        int[] keys = new int[CALLS_PER_ROUND];
        for (int round = 0; round < rounds; round++) {
            for (int i = 0; i < keys.length; i++) {
                keys[i] = random.nextInt(ENTRIES);
            }
            time(storeGet, keys, storeNanos, round);
            time(rawSelect, keys, rawNanos, round);
        }
    }

    private static void time(Call call, int[] keys, long[] nanos, int round) throws SQLException {
        for (int i = 0; i < keys.length; i++) {
            long start = System.nanoTime();
            call.run(keys[i]);
            long elapsed = System.nanoTime() - start;
            if (nanos.length > 0) {
                nanos[round * keys.length + i] = elapsed;
            }
        }
    }

    private static void select(Connection raw, String key) throws SQLException {
        try (PreparedStatement select = raw.prepareStatement(RAW_SELECT)) {
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

    private static String key(int index) {
        return "v1:" + "%064x".formatted(index);
    }

    private static double median(long[] nanos) {
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2] / 1_000.0;
    }

    private static double mean(long[] nanos) {
        return Arrays.stream(nanos).average().orElse(0) / 1_000.0;
    }

    @FunctionalInterface
    private interface Call {
        void run(int keyIndex) throws SQLException;
    }
}
