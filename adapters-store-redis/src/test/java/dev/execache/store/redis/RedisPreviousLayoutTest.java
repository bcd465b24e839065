package dev.execache.store.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.core.MutableClock;
import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.Counter;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/**
 * A Redis that holds a cache of the layout before partitions ({@code {PREFIX}2:}): the store
 * says so once, never reads it, and leaves every one of its keys as it was.
 */
@ExtendWith(TestRedis.class)
class RedisPreviousLayoutTest {
    private final MutableClock clock = new MutableClock(Instant.now());
    private final String prefix = TestRedis.freshPrefix();
    private final String oldRoot = "{" + prefix + "}2:";
    private final RedissonClient admin;
    private final Logger logger = Logger.getLogger(RedisCacheStore.class.getName());
    private final List<String> warnings = new CopyOnWriteArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord record) {
            if (record.getLevel().intValue() >= Level.WARNING.intValue()) {
                warnings.add(record.getMessage());
            }
        }

        @Override public void flush() { }
        @Override public void close() { }
    };

    RedisPreviousLayoutTest(TestRedis redis) {
        admin = redis.client();
    }

    @BeforeEach
    void captureWarnings() {
        logger.addHandler(capture);
    }

    @AfterEach
    void cleanUp() {
        logger.removeHandler(capture);
        admin.getKeys().deleteByPattern(KeyLayout.of(prefix).pattern());
        admin.getKeys().deleteByPattern(KeyLayout.of(prefix).previousPattern());
        admin.shutdown();
    }

    @Test
    void aCacheOfThePreviousLayoutIsToldOnceNeverReadAndLeftAsItWas() throws Exception {
        long farAhead = clock.millis() + Duration.ofHours(1).toMillis();
        admin.<String, String>getMap(oldRoot + "counters", StringCodec.INSTANCE).put("HITS", "5");
        admin.<String>getScoredSortedSet(oldRoot + "lru", StringCodec.INSTANCE).add(1, "v1:a");
        admin.<String, String>getMap(oldRoot + "e:v1:a", StringCodec.INSTANCE).putAll(Map.of("value", "\"old\"",
                "expires", Long.toString(farAhead), "hits", "0"));

        try (RedisCacheStore store = new RedisCacheStore(admin, prefix, 100, SigningKeys.none(), TestRedis.BEHAVIOUR_TIMEOUT,
                clock)) {
            assertThat(store.checks().previousLayout().get(30, TimeUnit.SECONDS)).isTrue();
            assertThat(store.checks().previousLayout().get(30, TimeUnit.SECONDS)).isTrue();
            assertThat(warnings).as("told once").hasSize(1);
            assertThat(warnings.get(0)).doesNotContain("\n").contains(oldRoot + "*").contains("left alone")
                    .contains("redis-cli --scan --pattern");

            assertThat(store.get("v1:a")).as("never read").isEmpty();
            assertThat(store.counters().totals().get(Counter.HITS)).as("its counters neither").isZero();
            Instant now = clock.instant();
            store.put(new CacheEntry("v1:a", "\"new\"", "", Duration.ofMillis(5), Map.of(), now, now.plus(Duration.ofMinutes(5)), 0));
            assertThat(store.get("v1:a")).map(CacheEntry::value).contains("\"new\"");
            store.clear();
            store.counters().zero();
        }

        assertThat(admin.<String, String>getMap(oldRoot + "e:v1:a", StringCodec.INSTANCE).get("value")).isEqualTo("\"old\"");
        assertThat(admin.<String, String>getMap(oldRoot + "counters", StringCodec.INSTANCE).get("HITS")).isEqualTo("5");
        assertThat(admin.<String>getScoredSortedSet(oldRoot + "lru", StringCodec.INSTANCE).readAll()).containsExactly("v1:a");
    }

    @Test
    void aRedisWithoutThePreviousLayoutSaysNothing() throws Exception {
        try (RedisCacheStore store = new RedisCacheStore(admin, prefix, 100, SigningKeys.none(), TestRedis.BEHAVIOUR_TIMEOUT,
                clock)) {
            assertThat(store.checks().previousLayout().get(30, TimeUnit.SECONDS)).isFalse();
            assertThat(warnings).isEmpty();
        }
    }
}
