package dev.execache.store.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.execache.core.CachePolicy;
import dev.execache.core.CacheStatus;
import dev.execache.core.CachedExecutor;
import dev.execache.core.ExecutionOutcome;
import dev.execache.core.ExecutionRequest;
import dev.execache.core.ExecutionResult;
import dev.execache.core.MutableClock;
import dev.execache.core.ScriptedSandbox;
import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.Counter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/**
 * A fleet key: entries no key of the fleet signed (another key's, none at all, or a signed
 * entry changed by hand) are never served, and are removed and counted; rotation keeps old
 * entries readable.
 */
@ExtendWith(TestRedis.class)
class RedisSigningTest {
    private static final SigningKeys OLD = SigningKeys.of(List.of("old fleet key 0123456789abcdef"));
    private static final SigningKeys NEW_THEN_OLD = SigningKeys.of(List.of("new fleet key 0123456789abcdef",
            "old fleet key 0123456789abcdef"));
    private static final SigningKeys NEW = SigningKeys.of(List.of("new fleet key 0123456789abcdef"));
    private static final SigningKeys STRANGER = SigningKeys.of(List.of("someone else's key 0123456789"));

    private final TestRedis redis;
    private final String prefix = TestRedis.freshPrefix();
    private final MutableClock clock = new MutableClock(Instant.now());
    private final List<RedisCacheStore> stores = new ArrayList<>();

    RedisSigningTest(TestRedis redis) {
        this.redis = redis;
    }

    private RedisCacheStore store(SigningKeys keys) {
        RedisCacheStore store = RedisCacheStore.connect(RedisStoreSettings.of(redis.url()).withKeyPrefix(prefix)
                .withSigningKeys(keys), clock);
        stores.add(store);
        return store;
    }

    @AfterEach
    void cleanUp() {
        stores.forEach(RedisCacheStore::close);
        RedissonClient admin = redis.client();
        try {
            admin.getKeys().deleteByPattern(KeyLayout.of(prefix).pattern());
        } finally {
            admin.shutdown();
        }
    }

    private CacheEntry entry(String key, String value) {
        return new CacheEntry(key, value, "", Duration.ofMillis(5), Map.of("github", "v1"), clock.instant(),
                clock.instant().plus(Duration.ofMinutes(5)), 0, "label");
    }

    private Map<String, String> rawEntry(String key) {
        RedissonClient admin = redis.client();
        try {
            return new HashMap<>(admin.<String, String>getMap(KeyLayout.of(prefix).entry(key), StringCodec.INSTANCE).readAllMap());
        } finally {
            admin.shutdown();
        }
    }

    private void writeRaw(String key, Map<String, String> fields) {
        RedissonClient admin = redis.client();
        try {
            admin.<String, String>getMap(KeyLayout.of(prefix).entry(key), StringCodec.INSTANCE).putAll(fields);
        } finally {
            admin.shutdown();
        }
    }

    @Test
    void aSignedEntryIsServedToTheFleet() {
        store(OLD).put(entry("v1:a", "{\"n\":1}"));

        assertThat(store(OLD).get("v1:a")).hasValueSatisfying(got -> assertThat(got.value()).isEqualTo("{\"n\":1}"));
        assertThat(rawEntry("v1:a").get("sig")).startsWith("h1.");
    }

    @Test
    void anEntrySignedWithAnotherKeyIsNeverServedItIsRemovedAndCounted() {
        store(STRANGER).put(entry("v1:a", "\"planted\""));
        RedisCacheStore fleet = store(OLD);

        assertThat(fleet.get("v1:a")).isEmpty();
        assertThat(fleet.counters().totals()).containsEntry(Counter.DAMAGED, 1L);
        assertThat(rawEntry("v1:a")).isEmpty();
        assertThat(fleet.size()).isZero();
    }

    @Test
    void anUnsignedEntryIsNeverServedByAFleetWithAKey() {
        store(SigningKeys.none()).put(entry("v1:a", "\"planted\""));
        RedisCacheStore fleet = store(OLD);

        assertThat(fleet.peek("v1:a")).isEmpty();
        assertThat(fleet.entries()).isEmpty();
        assertThat(fleet.counters().totals()).containsEntry(Counter.DAMAGED, 1L);
        assertThat(rawEntry("v1:a")).isEmpty();
    }

    @Test
    void anEntryWrittenStraightIntoRedisIsNeverServed() {
        long now = clock.millis();
        writeRaw("v1:a", Map.of("value", "\"planted\"", "console", "", "exec", "1000", "created", Long.toString(now),
                "expires", Long.toString(now + 60_000), "hits", "0", "tools", "", "sum", "0", "label", "x"));
        RedisCacheStore fleet = store(OLD);

        assertThat(fleet.get("v1:a")).isEmpty();
        assertThat(rawEntry("v1:a")).isEmpty();
        assertThat(fleet.counters().totals()).containsEntry(Counter.DAMAGED, 1L);
    }

    /** An attacker who knows the format can keep the signature and fix the checksum: the signature still fails. */
    @Test
    void aSignedEntryChangedByHandIsNeverServed() {
        RedisCacheStore fleet = store(OLD);
        fleet.put(entry("v1:a", "{\"n\":1}"));
        CacheEntry forged = entry("v1:a", "\"planted\"");
        Map<String, String> raw = rawEntry("v1:a");
        raw.put("value", forged.value());
        raw.put("sum", Long.toString(forged.checksum()));
        writeRaw("v1:a", raw);

        assertThat(fleet.get("v1:a")).isEmpty();
        assertThat(fleet.counters().totals()).containsEntry(Counter.DAMAGED, 1L);
    }

    @Test
    void aLongerExpiryWrittenByHandIsNeverServed() {
        RedisCacheStore fleet = store(OLD);
        fleet.put(entry("v1:a", "{\"n\":1}"));
        writeRaw("v1:a", Map.of("expires", Long.toString(clock.millis() + Duration.ofDays(365).toMillis())));

        assertThat(fleet.get("v1:a")).isEmpty();
    }

    @Test
    void aPlantedResultIsRunAgainNeverServedThroughTheExecutor() {
        ScriptedSandbox sandbox = ScriptedSandbox.echo();
        CachedExecutor attacker = CachedExecutor.builder(new ScriptedSandbox(request -> ExecutionResult.success("\"planted\"", "", Duration.ofMillis(250))), store(STRANGER)).clock(clock).build();
        CachedExecutor fleet = CachedExecutor.builder(sandbox, store(OLD)).clock(clock).build();
        ExecutionRequest request = ExecutionRequest.of("return 1", Map.of());
        attacker.execute(request);

        ExecutionOutcome outcome = fleet.execute(request);

        assertThat(outcome.status()).isEqualTo(CacheStatus.MISS);
        assertThat(outcome.result().value()).isEqualTo("\"return 1\"");
        assertThat(sandbox.executions()).isEqualTo(1);
        assertThat(fleet.execute(request).status()).isEqualTo(CacheStatus.HIT);
    }

    /** Rotation: first every instance accepts the new key, then writes with it, then the old one is dropped. */
    @Test
    void rotationKeepsOldEntriesReadableUntilTheOldKeyIsDropped() {
        store(OLD).put(entry("v1:old", "\"by the old key\""));
        RedisCacheStore rotating = store(NEW_THEN_OLD);
        rotating.put(entry("v1:new", "\"by the new key\""));

        assertThat(rotating.get("v1:old")).isPresent();
        assertThat(rotating.get("v1:new")).isPresent();
        assertThat(store(SigningKeys.of(List.of("old fleet key 0123456789abcdef", "new fleet key 0123456789abcdef")))
                .get("v1:new")).as("an instance that accepts the new key before writing with it").isPresent();

        RedisCacheStore rotated = store(NEW);
        assertThat(rotated.get("v1:new")).isPresent();
        assertThat(rotated.get("v1:old")).as("signed with a key no longer accepted").isEmpty();
    }

    @Test
    void aShortKeyIsRefusedWithoutShowingIt() {
        assertThatThrownBy(() -> SigningKeys.of(List.of("short-secret")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("the signing key has 12 characters")
                .hasMessageNotContaining("short-secret");
        assertThat(NEW_THEN_OLD.toString()).isEqualTo("SigningKeys[2 keys]");
        assertThat(RedisStoreSettings.of(redis.url()).withSigningKeys(NEW).toString()).doesNotContain("fleet key");
    }
}
