package dev.execache.benchmarks.jmh;

import dev.execache.core.spi.CacheEntry;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/** The check every read makes ({@link CacheEntry#isIntact()}) beside the SHA-256 of the same value. */
public class ChecksumBenchmark extends AverageTimeBenchmark {
    @Param({"1024", "65536"})
    public int valueBytes;

    private CacheEntry entry;

    @Setup
    public void setUp() {
        String value = "\"" + "x".repeat(valueBytes - 2) + "\"";
        Instant now = Instant.now();
        entry = new CacheEntry("v1:k", value, "", Duration.ofMillis(1), Map.of(), now, now.plusSeconds(60), 0);
    }

    @Benchmark
    public boolean checksumCheck() {
        return entry.isIntact();
    }

    @Benchmark
    public byte[] sha256OfValue() throws Exception {
        return MessageDigest.getInstance("SHA-256").digest(entry.value().getBytes(StandardCharsets.UTF_8));
    }
}
