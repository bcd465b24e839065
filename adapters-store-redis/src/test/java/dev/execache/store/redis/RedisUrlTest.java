package dev.execache.store.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RedisUrlTest {

    @Test
    void hostAloneMeansTheDefaultPortAndDatabaseZero() {
        assertThat(RedisUrl.parse("redis://cache.internal"))
                .isEqualTo(new RedisUrl(false, "cache.internal", 6379, null, null, 0));
    }

    @Test
    void userPasswordPortAndDatabaseAreRead() {
        RedisUrl url = RedisUrl.parse("rediss://app:p%40ss+word@10.0.0.5:6380/2");

        assertThat(url).isEqualTo(new RedisUrl(true, "10.0.0.5", 6380, "app", "p@ss+word", 2));
        assertThat(url.address()).isEqualTo("rediss://10.0.0.5:6380");
    }

    @Test
    void aUserInfoWithoutAColonIsAPassword() {
        assertThat(RedisUrl.parse("redis://s3cret@localhost").password()).isEqualTo("s3cret");
        assertThat(RedisUrl.parse("redis://:s3cret@localhost")).extracting(RedisUrl::username, RedisUrl::password)
                .containsExactly(null, "s3cret");
    }

    @Test
    void theTextOfAUrlNeverShowsTheCredentials() {
        RedisUrl url = RedisUrl.parse("redis://app:s3cret@localhost:6379/3");

        assertThat(url).hasToString("redis://localhost:6379/3");
        assertThat(RedisStoreSettings.of("redis://app:s3cret@localhost").toString()).doesNotContain("s3cret");
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "http://localhost:6379",
        "localhost:6379",
        "redis://",
        "redis://localhost:port",
        "redis://localhost:99999",
        "redis://localhost:0",
        "redis://localhost/db2",
        "redis://localhost/2?timeout=5",
        "redis://user:s3cret@local host",
        " "})
    void aMalformedUrlIsRefusedWithTheExpectedShape(String malformed) {
        assertThatThrownBy(() -> RedisUrl.parse(malformed))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("redis://[[user:]password@]host[:port][/database]")
                .message().doesNotContain("s3cret");
    }

    @Test
    void settingsRefuseAMalformedUrlAtOnce() {
        assertThatThrownBy(() -> RedisStoreSettings.of("redis://localhost:notaport"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("malformed Redis URL redis://localhost:notaport");
    }

    @Test
    void settingsNameTheBadField() {
        RedisStoreSettings settings = RedisStoreSettings.of("redis://localhost");

        assertThatThrownBy(() -> settings.withMaxEntries(0)).hasMessageStartingWith("maxEntries");
        assertThatThrownBy(() -> settings.withKeyPrefix("")).hasMessageStartingWith("keyPrefix");
        assertThatThrownBy(() -> settings.withTimeout(Duration.ZERO)).hasMessageStartingWith("timeout");
    }
}
