package dev.execache.benchmarks.library;

import dev.execache.benchmarks.support.Machine;
import dev.execache.benchmarks.support.Reports;
import dev.execache.benchmarks.support.Table;
import dev.execache.store.redis.RedisCacheStore;
import dev.execache.store.redis.RedisStoreSettings;
import dev.execache.store.redis.TestRedisCluster;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * How one shared cache grows with its Redis Cluster: hits per second on a Cluster of 1 master and
 * of 3 (the same store, same entries, same client threads), the entries each master holds, and,
 * from the CPU time each master spent per hit, what a Cluster of N masters would serve when each
 * master has a core of its own. Starts its own Clusters. A benchmark, not a test: it prints.
 *
 * <pre>java -cp benchmarks/target/benchmarks.jar dev.execache.benchmarks.library.ClusterScalingFigures [seconds]</pre>
 */
public final class ClusterScalingFigures {
    static final int ENTRIES = 1_000;
    static final int THREADS = 16;

    private ClusterScalingFigures() {
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        Duration measured = Duration.ofSeconds(args.length > 0 ? Long.parseLong(args[0]) : 10);
        String loadAtStart = Machine.loadAverage();
        Table table = new Table("Cluster", "hits/s", "entries per master", "master CPU per hit", "hits/s one master can serve");
        double perMasterCapacity = 0;
        double oneMaster = 0;
        for (int masters : List.of(1, 3)) {
            Figures figures = measure(masters, measured);
            double capacity = 1 / figures.cpuSecondsPerHit;
            table.add(masters + (masters == 1 ? " master" : " masters"), String.format(Locale.ROOT, "%,.0f", figures.hitsPerSecond),
                    figures.entriesPerMaster.toString(), String.format(Locale.ROOT, "%.1f µs", figures.cpuSecondsPerHit * 1e6),
                    String.format(Locale.ROOT, "%,.0f", capacity));
            if (masters == 1) {
                oneMaster = figures.hitsPerSecond;
            } else {
                perMasterCapacity = capacity;
                table.note(String.format(Locale.ROOT, "3 masters served %.2f times the hits of 1 on this machine", figures.hitsPerSecond / oneMaster));
            }
        }
        table.note("Each run: " + ENTRIES + " entries of " + StoreEntries.JSON_ROWS.length() + " bytes in one store (16 partitions,"
                + " bound 10,000), " + THREADS + " client threads in one JVM calling get(key) on random keys for "
                + measured.toSeconds() + " s after a warm-up; master CPU per hit is the masters' CPU time (INFO cpu) over the hits.");
        for (int n : List.of(3, 6, 12, 24)) {
            table.note(String.format(Locale.ROOT, "A Cluster of %d masters, each with a core, would serve about %,.0f hits/s"
                    + " (%d x the hits one master serves per CPU second), given clients and network that keep up.", n,
                    n * perMasterCapacity, n));
        }
        Reports.print(Machine.describe("no Deno used"), loadAtStart, "", table);
        System.exit(0);
    }

    record Figures(double hitsPerSecond, List<Long> entriesPerMaster, double cpuSecondsPerHit) {
    }

    static Figures measure(int masters, Duration measured) throws Exception {
        // a node that never met another does not know its own address: announced, so the client can find it
        try (TestRedisCluster cluster = TestRedisCluster.start(masters, "--cluster-announce-ip", "127.0.0.1");
                RedisCacheStore store = RedisCacheStore.connect(RedisStoreSettings.of(cluster.url())
                        .withKeyPrefix("bench-scaling:").withMaxEntries(10_000), Clock.systemUTC())) {
            for (int i = 0; i < ENTRIES; i++) {
                store.put(StoreEntries.rows("v1:" + i));
            }
            List<Long> perMaster = cluster.keysPerNode("\\{bench-scaling:3p*}:e:*");
            hits(store, Duration.ofSeconds(3));
            List<Double> cpuBefore = cluster.cpuSecondsPerNode();
            long hits = hits(store, measured);
            List<Double> cpuAfter = cluster.cpuSecondsPerNode();
            double cpu = 0;
            for (int i = 0; i < masters; i++) {
                cpu += cpuAfter.get(i) - cpuBefore.get(i);
            }
            return new Figures(hits / (double) measured.toSeconds(), perMaster, cpu / hits);
        }
    }

    /** Hits from {@link #THREADS} threads on random keys for this long; returns how many. */
    private static long hits(RedisCacheStore store, Duration during) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        long end = System.nanoTime() + during.toNanos();
        try {
            List<Future<Long>> counts = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                counts.add(pool.submit(() -> {
                    long count = 0;
                    while (System.nanoTime() < end) {
                        store.get("v1:" + ThreadLocalRandom.current().nextInt(ENTRIES)).orElseThrow();
                        count++;
                    }
                    return count;
                }));
            }
            long total = 0;
            for (Future<Long> count : counts) {
                total += count.get(during.toSeconds() + 60, TimeUnit.SECONDS);
            }
            return total;
        } finally {
            pool.shutdownNow();
        }
    }
}
