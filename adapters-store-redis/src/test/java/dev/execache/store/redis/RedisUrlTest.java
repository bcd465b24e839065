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
                .isEqualTo(RedisUrl.standalone(false, "cache.internal", 6379, null, null, 0));
    }

    @Test
    void userPasswordPortAndDatabaseAreRead() {
        RedisUrl url = RedisUrl.parse("rediss://app:p%40ss+word@10.0.0.5:6380/2");

        assertThat(url).isEqualTo(RedisUrl.standalone(true, "10.0.0.5", 6380, "app", "p@ss+word", 2));
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

    @Test
    void sentinelsNameTheMasterAndEachHasItsPort() {
        RedisUrl url = RedisUrl.parse("redis-sentinel://:s3cret@s1:26380,s2,10.0.0.7:26381/mymaster/2");

        assertThat(url.topology()).isEqualTo(RedisUrl.Topology.SENTINEL);
        assertThat(url.nodes()).containsExactly("s1:26380", "s2:26379", "10.0.0.7:26381");
        assertThat(url.master()).isEqualTo("mymaster");
        assertThat(url.database()).isEqualTo(2);
        assertThat(url.password()).isEqualTo("s3cret");
        assertThat(url).hasToString("redis-sentinel://s1:26380,s2:26379,10.0.0.7:26381/mymaster/2");
    }

    @Test
    void aClusterIsFoundThroughAnyOfItsNodes() {
        RedisUrl url = RedisUrl.parse("rediss-cluster://app:pw@n1:7000,n2:7001");

        assertThat(url.topology()).isEqualTo(RedisUrl.Topology.CLUSTER);
        assertThat(url.addresses()).containsExactly("rediss://n1:7000", "rediss://n2:7001");
        assertThat(url).hasToString("rediss-cluster://n1:7000,n2:7001");
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "redis-sentinel://user:s3cret@s1:26379",
        "redis-sentinel://s1:26379/",
        "redis-sentinel://s1:26379/master/db/x",
        "redis-cluster://user:s3cret@n1:7000/2",
        "redis-cluster://n1:7000,,n2:7001",
        "redis://user:s3cret@a:6379,b:6379"})
    void aMalformedSentinelOrClusterUrlSaysWhat(String malformed) {
        assertThatThrownBy(() -> RedisUrl.parse(malformed))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("redis-sentinel://")
                .message().doesNotContain("s3cret");
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
