package dev.execache.benchmarks.jmh;

import dev.execache.core.spi.CacheEntry;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/** The check every read makes ({@link CacheEntry#isIntact()}) beside the SHA-256 of the same value. */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ChecksumBenchmark {
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
