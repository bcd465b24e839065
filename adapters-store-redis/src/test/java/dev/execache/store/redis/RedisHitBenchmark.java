package dev.execache.store.redis;

import dev.execache.core.CacheEntry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.redisson.api.RBucket;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/**
 * The store's hit ({@link RedisCacheStore#get}) beside a raw Redisson {@code RBucket.get} of
 * the same value on one redis-server started here, in one run: median microseconds and their
 * ratio. A one-line Lua script that reads the same value is measured too, as the floor of any
 * hit done in a script. Single-threaded latency; the three alternate call by call, in turn
 * order, so that drift and noise from other processes fall on all of them alike.
 *
 * <p>Not a test (surefire runs {@code *Test} classes only). From the repository root:
 *
 * <pre>
 * ./mvnw -B -q -pl adapters-store-redis -am test-compile dependency:build-classpath \
 *     -Dmdep.outputFile=target/test.classpath -Dmdep.includeScope=test
 * java -cp adapters-store-redis/target/test-classes:adapters-store-redis/target/classes:$(cat adapters-store-redis/target/test.classpath) \
 *     dev.execache.store.redis.RedisHitBenchmark
 * </pre>
 */
public final class RedisHitBenchmark {
    private static final int WARMUP = 20_000;
    private static final int MEASURED = 50_000;
    private static final String ONE_LINE_SCRIPT = "return redis.call('GET', KEYS[1])";

    public static void main(String[] args) {
        String value = "{\"rows\":[" + "{\"id\":1,\"name\":\"a row of a result\"},".repeat(8) + "{}]}";
        try (RedisServerProcess server = RedisServerProcess.start();
                RedisCacheStore store = RedisCacheStore.connect(
                        RedisStoreSettings.of(server.url()).withKeyPrefix("bench:"), Clock.systemUTC())) {
            RedissonClient raw = TestRedis.client(server.url());
            try {
                Instant now = Instant.now();
                store.put(new CacheEntry("v1:bench", value, "", Duration.ofMillis(800), Map.of("github", "v1"),
                        now, now.plus(Duration.ofHours(1)), 0));
                RBucket<String> bucket = raw.getBucket("raw:bench", StringCodec.INSTANCE);
                bucket.set(value);
                RScript script = raw.getScript(StringCodec.INSTANCE);
                List<Runnable> calls = List.of(
                        () -> store.get("v1:bench").orElseThrow(),
                        bucket::get,
                        () -> script.eval(RScript.Mode.READ_ONLY, ONE_LINE_SCRIPT, RScript.ReturnType.VALUE, List.of("raw:bench")));

                measure(calls, WARMUP);
                long[][] nanos = measure(calls, MEASURED);

                double storeMedian = median(nanos[0]);
                double rawMedian = median(nanos[1]);
                System.out.printf("value %d chars; %,d calls each after %,d warm-up calls%n", value.length(), MEASURED, WARMUP);
                System.out.printf("redis store hit get(key):   median %6.1f us%n", storeMedian);
                System.out.printf("raw Redisson RBucket.get:   median %6.1f us%n", rawMedian);
                System.out.printf("one-line Lua script (EVAL): median %6.1f us%n", median(nanos[2]));
                System.out.printf("ratio store hit / RBucket.get: %.2fx%n", storeMedian / rawMedian);
            } finally {
                raw.shutdown();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static long[][] measure(List<Runnable> calls, int times) {
        long[][] nanos = new long[calls.size()][times];
        for (int i = 0; i < times; i++) {
            for (int turn = 0; turn < calls.size(); turn++) {
                int which = (i + turn) % calls.size();
                long start = System.nanoTime();
                calls.get(which).run();
                nanos[which][i] = System.nanoTime() - start;
            }
        }
        return nanos;
    }

    private static double median(long[] nanos) {
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2] / 1_000.0;
    }

    private RedisHitBenchmark() {
    }
}
