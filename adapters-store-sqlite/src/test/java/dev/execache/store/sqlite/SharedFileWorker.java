package dev.execache.store.sqlite;

import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.CacheStore;
import dev.execache.core.spi.Counter;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;

/**
 * One of the processes of {@link SqliteMultiProcessTest}: says {@code ready}, waits for a
 * line on standard input so that all start at once, then puts its own entries while reading
 * its own and the others'. Exits 0 only if every read was right and nothing threw.
 *
 * <p>Arguments: the file, this worker's number, how many workers, how many entries each.
 */
public final class SharedFileWorker {
    static final int BOUND = 100_000;

    private SharedFileWorker() {
    }

    public static void main(String[] args) throws Exception {
        Path file = Path.of(args[0]);
        int worker = Integer.parseInt(args[1]);
        int workers = Integer.parseInt(args[2]);
        int entries = Integer.parseInt(args[3]);
        Clock clock = Clock.systemUTC();
        SplittableRandom random = new SplittableRandom(worker);
        try (SqliteCacheStore store = new SqliteCacheStore(file, BOUND, clock)) {
            System.out.println("ready");
            System.out.flush();
            new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
            for (int i = 0; i < entries; i++) {
                Instant now = clock.instant();
                store.put(new CacheEntry(key(worker, i), value(worker, i), "worker " + worker, Duration.ofMillis(i),
                        Map.of("worker" + worker, "1", "shared", "1"), now, now.plus(Duration.ofHours(1)), 0));
                store.counters().increment(Counter.MISSES, 1);

                int own = random.nextInt(i + 1);
                Optional<CacheEntry> mine = store.get(key(worker, own));
                if (mine.isEmpty() || !mine.get().value().equals(value(worker, own))) {
                    throw new IllegalStateException("worker " + worker + " lost its own entry " + key(worker, own) + ": " + mine);
                }
                store.counters().increment(Counter.HITS, 1);

                int other = random.nextInt(workers);
                int theirs = random.nextInt(entries);
                store.peek(key(other, theirs)).ifPresent(found -> {
                    if (!found.value().equals(value(other, theirs))) {
                        throw new IllegalStateException("read " + found + " under " + key(other, theirs));
                    }
                });
                if (i % 50 == 0) {
                    store.recordVersions(CacheStore.DEFAULT_SCOPE, Map.of("worker" + worker, "v" + i));
                    store.size();
                }
            }
            store.recordVersions(CacheStore.DEFAULT_SCOPE, Map.of("worker" + worker, "done"));
        }
        System.out.println("done");
    }

    static String key(int worker, int index) {
        return "v1:worker" + worker + ":" + index;
    }

    static String value(int worker, int index) {
        return "{\"worker\":" + worker + ",\"index\":" + index + "}";
    }
}
