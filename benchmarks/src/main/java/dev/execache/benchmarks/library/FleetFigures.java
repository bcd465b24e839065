package dev.execache.benchmarks.library;

import dev.execache.benchmarks.support.Machine;
import dev.execache.benchmarks.support.Progress;
import dev.execache.benchmarks.support.Reports;
import dev.execache.benchmarks.support.Samples;
import dev.execache.benchmarks.support.Table;
import dev.execache.core.CachedExecutor;
import dev.execache.core.ExecutionRequest;
import dev.execache.core.ExecutionResult;
import dev.execache.core.spi.Sandbox;
import dev.execache.store.redis.RedisCacheStore;
import dev.execache.store.redis.RedisServerProcess;
import dev.execache.store.redis.RedisStoreSettings;
import dev.execache.store.redis.SigningKeys;
import dev.execache.store.redis.TestRedisCluster;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.redisson.Redisson;
import org.redisson.api.RBucket;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;

/**
 * The fleet's Redis figures: a hit on standalone Redis and on a 3-master Cluster, unsigned and
 * signed, beside Redisson's {@code RBucket.get} on each, all six calls in turns in one run; and
 * what calls cost while Redis is paused ({@code CLIENT PAUSE}). Starts its own servers.
 *
 * <pre>java -cp benchmarks/target/benchmarks.jar dev.execache.benchmarks.library.FleetFigures</pre>
 */
public final class FleetFigures {
    private static final SigningKeys KEYS = SigningKeys.of(List.of("a fleet key for the benchmark, 0123456789"));
    static final int ROUNDS = 20;
    static final int CALLS_PER_ROUND = 1_000;
    static final Duration PAUSE = Duration.ofSeconds(5);

    private FleetFigures() {
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        Progress progress = new Progress();
        String loadAtStart = Machine.loadAverage();
        Table table = new Table();
        progress.note("fleet: hits on standalone and Cluster, signed and not, beside RBucket.get");
        hits(table);
        progress.note("fleet: calls while Redis is paused for " + PAUSE.toSeconds() + " s");
        paused(table);
        Reports.print(Machine.describe("no Deno used"), loadAtStart, "", table);
        System.exit(0);
    }

    /** Six calls in turns, call by call: each store's hit and the raw bucket get, on each topology. */
    public static void hits(Table table) throws Exception {
        try (RedisServerProcess standalone = RedisServerProcess.start(); TestRedisCluster cluster = TestRedisCluster.start()) {
            RedissonClient single = Redisson.create(config(standalone.url(), false));
            RedissonClient clustered = Redisson.create(config(cluster.url().replace("redis-cluster://", ""), true));
            try {
                List<String> names = new ArrayList<>();
                List<Turns.KeyedCall> calls = new ArrayList<>();
                for (var topology : List.of(Map.entry("standalone", single), Map.entry("Cluster", clustered))) {
                    RedissonClient client = topology.getValue();
                    RedisCacheStore plain = store(client, "bench-fleet:", SigningKeys.none());
                    RedisCacheStore signed = store(client, "bench-fleet-signed:", KEYS);
                    RBucket<String> bucket = client.getBucket("bench-fleet-raw", StringCodec.INSTANCE);
                    bucket.set(StoreEntries.JSON_ROWS);
                    names.add(topology.getKey() + " store hit");
                    calls.add(key -> plain.get("v1:bench").orElseThrow());
                    names.add(topology.getKey() + " store hit, signed");
                    calls.add(key -> signed.get("v1:bench").orElseThrow());
                    names.add(topology.getKey() + " RBucket.get");
                    calls.add(key -> bucket.get());
                }
                Turns.alternate(calls, 1, 10, CALLS_PER_ROUND);
                long[][] nanos = Turns.alternate(calls, 1, ROUNDS, CALLS_PER_ROUND);
                double[] micros = Arrays.stream(nanos).mapToDouble(Samples::medianMicros).toArray();
                table.note("Fleet hits: a redis-server and a 3-master Cluster (same binary) started by the report, one"
                        + " Redisson client each; a " + StoreEntries.JSON_ROWS.length() + "-byte value; the six calls alternate call by"
                        + " call; medians of " + ROUNDS * CALLS_PER_ROUND / 1000 + "k calls each after 10k warm-up calls.");
                for (int i = 0; i < 6; i += 3) {
                    String where = i == 0 ? "standalone" : "Cluster (3 masters)";
                    table.add("redis " + where + ": store hit `get(key)`", Table.micros(micros[i]),
                            "`RBucket.get` " + Table.micros(micros[i + 2]), Table.times(micros[i], micros[i + 2]), "");
                    table.add("redis " + where + ": signed store hit (HMAC-SHA256 checked)", Table.micros(micros[i + 1]),
                            "`RBucket.get` " + Table.micros(micros[i + 2]), Table.times(micros[i + 1], micros[i + 2]),
                            "unsigned hit " + Table.micros(micros[i]));
                }
            } finally {
                single.shutdown();
                clustered.shutdown();
            }
        }
    }

    private static RedisCacheStore store(RedissonClient client, String prefix, SigningKeys keys) {
        RedisCacheStore store = new RedisCacheStore(client, prefix, 100, keys, Clock.systemUTC());
        store.put(StoreEntries.rows("v1:bench"));
        return store;
    }

    /**
     * Calls through the executor (a miss each: new code, a sandbox that answers at once) before
     * and while Redis holds every client for {@link #PAUSE}: the first call meets the one
     * timeout of the outage, the breaker makes every later one skip Redis.
     */
    public static void paused(Table table) throws Exception {
        try (RedisServerProcess server = RedisServerProcess.start();
                RedisCacheStore store = RedisCacheStore.connect(RedisStoreSettings.of(server.url()), Clock.systemUTC())) {
            Sandbox sandbox = (request, tools) -> ExecutionResult.success("1", "", Duration.ZERO);
            CachedExecutor executor = CachedExecutor.builder(sandbox, store).build();
            List<Double> before = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                long start = System.nanoTime();
                executor.execute(ExecutionRequest.of("return 'before " + i + "'", Map.of()));
                before.add(Samples.millisSince(start));
            }
            long pausedAt = System.nanoTime();
            server.pauseClients(PAUSE);
            List<Double> during = new ArrayList<>();
            int timeouts = 0;
            for (int i = 0; System.nanoTime() - pausedAt < PAUSE.toNanos() - Duration.ofMillis(500).toNanos(); i++) {
                long start = System.nanoTime();
                executor.execute(ExecutionRequest.of("return 'during " + i + "'", Map.of()));
                double millis = Samples.millisSince(start);
                during.add(millis);
                if (millis >= RedisStoreSettings.DEFAULT_TIMEOUT.toMillis() * 0.9) {
                    timeouts++;
                }
                Thread.sleep(10);
            }
            double first = during.get(0);
            double rest = Samples.median(during.subList(1, during.size()));
            table.note(String.format(Locale.ROOT, "Paused Redis: CLIENT PAUSE %d ms on a redis-server started by the report;"
                    + " calls through CachedExecutor (new code each, a sandbox that answers at once), one every 10 ms;"
                    + " store timeout %d ms.", PAUSE.toMillis(), RedisStoreSettings.DEFAULT_TIMEOUT.toMillis()));
            table.add("a call while Redis is paused: the first of the outage", Table.millis(first),
                    "a call before the pause " + Table.millis(Samples.median(before)), "",
                    "one timeout per outage: " + (timeouts == 1 ? "met" : "**not met** (" + timeouts + " calls waited)"));
            table.add("a call while Redis is paused: every later one (median of " + (during.size() - 1) + ")",
                    Table.millis(rest), "a call before the pause " + Table.millis(Samples.median(before)),
                    Table.times(rest, Samples.median(before)), "");
        }
    }

    /** The store's own settings where they change latency: scripts by SHA, reads from masters. */
    private static Config config(String addresses, boolean cluster) {
        Config config = new Config();
        config.setUseScriptCache(true);
        if (cluster) {
            config.useClusterServers().addNodeAddress(Arrays.stream(addresses.split(",")).map(node -> "redis://" + node)
                    .toArray(String[]::new)).setReadMode(org.redisson.config.ReadMode.MASTER);
        } else {
            config.useSingleServer().setAddress(addresses);
        }
        return config;
    }
}
