package dev.execache.store.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.execache.core.CachedTool;
import dev.execache.core.ToolCallRequest;
import dev.execache.core.MutableClock;
import dev.execache.core.ToolResult;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A master of a real 3-master Cluster killed mid-run (a Cluster of its own: the test kills one of
 * its masters; its nodes keep serving the slots they hold when one fails, as
 * {@code cluster-require-full-coverage no} makes them): the calls whose keys are on the other
 * masters keep their cache, every answer stays right, and the outage is told in one line.
 */
class RedisClusterOutageTest {
    private static final int PAGES = 120;
    private static TestRedisCluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = TestRedisCluster.start("--cluster-require-full-coverage", "no");
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aKilledMasterCostsOnlyItsPartitionsAndIsToldOnce() throws Exception {
        List<LogRecord> warnings = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord record) {
                if (record.getLevel().intValue() >= Level.WARNING.intValue()) {
                    warnings.add(record);
                }
            }

            @Override public void flush() { }
            @Override public void close() { }
        };
        List<Logger> loggers = List.of(Logger.getLogger("dev.execache.core"), Logger.getLogger(RedisCacheStore.class.getName()));
        // another test of this JVM may have quieted these loggers: the outage line must reach the handler
        List<Level> levels = loggers.stream().map(Logger::getLevel).toList();
        loggers.forEach(logger -> {
            logger.setLevel(Level.INFO);
            logger.addHandler(capture);
        });
        // a budget a loaded machine does not trip on the masters that live; the dead one refuses at once
        RedisStoreSettings settings = RedisStoreSettings.of(cluster.url()).withKeyPrefix(TestRedis.freshPrefix())
                .withMaxEntries(10_000).withTimeout(Duration.ofSeconds(10)).withSigningKeys(SignedRedisCacheStoreTest.KEYS);
        try (RedisCacheStore store = RedisCacheStore.connect(settings, new MutableClock(Instant.now()))) {
            AtomicInteger ran = new AtomicInteger();
            CachedTool tool = CachedTool.builder((name, args) -> {
                ran.incrementAndGet();
                return ToolResult.ok("{\"page\":" + args.get("page") + "}");
            }, store).defaultRule(true, Duration.ofMinutes(5), 10_000).build();
            for (int page = 0; page < PAGES; page++) {
                assertThat(tool.call(ToolCallRequest.of("read", Map.of("page", page))).result().json()).isEqualTo("{\"page\":" + page + "}");
            }
            List<Long> held = cluster.keysPerNode(store.layout().entryPattern());
            assertThat(held.stream().mapToLong(Long::longValue).sum()).as("every answer stored").isEqualTo(PAGES);
            int dead = 1;
            warnings.clear();

            cluster.kill(dead);
            for (int page = 0; page < PAGES; page++) {
                assertThat(tool.call(ToolCallRequest.of("read", Map.of("page", page))).result().json()).as("page %s", page).isEqualTo("{\"page\":" + page + "}");
            }

            assertThat((long) ran.get() - PAGES).as("only the answers the dead master held ran again").isEqualTo(held.get(dead));
            assertThat(held.get(dead)).as("the dead master held a part of the cache, not all of it").isBetween(1L, PAGES - 1L);
            // the outage is told by a probe in the background, once it knows how far the outage reaches
            await().atMost(Duration.ofSeconds(60)).until(() -> !warnings.isEmpty());
            assertThat(warnings).as("the outage, told once").extracting(LogRecord::getMessage).hasSize(1);
            String line = warnings.get(0).getMessage();
            assertThat(line).doesNotContain("\n").contains("partitions (").contains("% of the cache) do not answer")
                    .contains("the others keep their cache");
        } finally {
            for (int i = 0; i < loggers.size(); i++) {
                loggers.get(i).removeHandler(capture);
                loggers.get(i).setLevel(levels.get(i));
            }
        }
    }
}
