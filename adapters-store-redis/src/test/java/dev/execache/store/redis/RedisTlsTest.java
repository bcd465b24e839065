package dev.execache.store.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.execache.core.spi.CacheEntry;
import dev.execache.core.MutableClock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code rediss://} against a redis-server that speaks TLS only, with a certificate made here.
 * The client trusts it the way a deployment would: through the JVM's trust store
 * ({@code javax.net.ssl.trustStore}).
 */
class RedisTlsTest {
    @TempDir
    static Path dir;
    private static TestCertificate certificate;
    private static RedisServerProcess server;

    private final MutableClock clock = new MutableClock(Instant.now());

    @BeforeAll
    static void startTlsServer() throws Exception {
        certificate = TestCertificate.create(Files.createDirectories(dir.resolve("tls")));
        server = RedisServerProcess.startTls(certificate.certificatePem(), certificate.keyPem());
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    @Test
    void aRedissUrlStoresAndReadsOverTls() {
        assertThat(server.url()).startsWith("rediss://");
        String previous = System.getProperty("javax.net.ssl.trustStore");
        String previousPassword = System.getProperty("javax.net.ssl.trustStorePassword");
        System.setProperty("javax.net.ssl.trustStore", certificate.trustStore().toString());
        System.setProperty("javax.net.ssl.trustStorePassword", certificate.trustStorePassword());
        // a generous budget: a TLS handshake on a busy machine can take more than the default 2 s
        try (RedisCacheStore store = RedisCacheStore.connect(RedisStoreSettings.of(server.url())
                .withKeyPrefix(TestRedis.freshPrefix()).withTimeout(Duration.ofSeconds(30)), clock)) {
            Instant now = clock.instant();
            store.put(new CacheEntry("v1:a", "42", "", Duration.ofMillis(3), Map.of(), now, now.plusSeconds(60), 0));

            assertThat(store.get("v1:a")).map(CacheEntry::value).contains("42");
        } finally {
            restore("javax.net.ssl.trustStore", previous);
            restore("javax.net.ssl.trustStorePassword", previousPassword);
        }
    }

    @Test
    void aPlainUrlOnTheTlsPortIsRefusedWithAClearError() {
        String plain = server.url().replace("rediss://", "redis://");

        assertThatThrownBy(() -> RedisCacheStore.connect(RedisStoreSettings.of(plain), clock))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Redis at " + plain)
                .message().doesNotContain("\n");
    }

    private static void restore(String property, String value) {
        if (value == null) {
            System.clearProperty(property);
        } else {
            System.setProperty(property, value);
        }
    }
}
