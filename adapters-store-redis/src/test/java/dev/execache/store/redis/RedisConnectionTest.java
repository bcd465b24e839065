package dev.execache.store.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.execache.core.spi.CacheEntry;
import dev.execache.core.MutableClock;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/** The URL's password and database number reach the server: one started with a password. */
class RedisConnectionTest {
    private static final String PASSWORD = "s3cret/with:odd@chars";
    private static RedisServerProcess server;

    private final MutableClock clock = new MutableClock(Instant.now());

    @BeforeAll
    static void startServerWithPassword() throws Exception {
        server = RedisServerProcess.start("--requirepass", PASSWORD);
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.close();
    }

    @Test
    void thePasswordAndDatabaseOfTheUrlAreUsed() {
        String url = "redis://:" + URLEncoder.encode(PASSWORD, StandardCharsets.UTF_8)
                + "@127.0.0.1:" + server.port() + "/2";
        try (RedisCacheStore store = RedisCacheStore.connect(RedisStoreSettings.of(url), clock)) {
            Instant now = clock.instant();
            store.put(new CacheEntry("v1:a", "1", "", Duration.ZERO, Map.of(), now, now.plusSeconds(60), 0));
        }

        RedissonClient databaseTwo = TestRedis.client(url);
        RedissonClient databaseZero = TestRedis.client(url.substring(0, url.lastIndexOf('/')));
        try {
            assertThat(databaseTwo.getKeys().countExists(KeyLayout.of(RedisStoreSettings.DEFAULT_KEY_PREFIX).entry("v1:a"))).isEqualTo(1);
            assertThat(databaseZero.getKeys().count()).isZero();
        } finally {
            databaseTwo.shutdown();
            databaseZero.shutdown();
        }
    }

    @Test
    void aWrongPasswordIsAClearErrorThatSaysSoAndDoesNotShowIt() {
        String url = "redis://:wrong-password@127.0.0.1:" + server.port();

        assertThatThrownBy(() -> RedisCacheStore.connect(RedisStoreSettings.of(url), clock))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("Redis at redis://127.0.0.1:" + server.port() + " refused the credentials: wrong user name"
                        + " or password (the URL's user info, e.g. redis://user:password@host)")
                .message().doesNotContain("wrong-password");
    }

    @Test
    void aMissingPasswordIsReportedAsRefusedCredentials() {
        String url = "redis://127.0.0.1:" + server.port();

        assertThatThrownBy(() -> RedisCacheStore.connect(RedisStoreSettings.of(url), clock))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("Redis at redis://127.0.0.1:" + server.port() + " refused the credentials");
    }
}
