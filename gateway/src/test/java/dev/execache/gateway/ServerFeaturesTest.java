package dev.execache.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ServerFeaturesTest {
    @Test
    void aUriMatchesTheTemplatesItExpandsFrom() {
        assertThat(ServerFeatures.matches("lab://rooms/{room}", "lab://rooms/kiln")).isTrue();
        assertThat(ServerFeatures.matches("lab://rooms/{room}", "lab://rooms/kiln/door")).isFalse();
        assertThat(ServerFeatures.matches("file:///{+path}", "file:///a/b.txt")).isTrue();
        assertThat(ServerFeatures.matches("a.b://{x}", "aXb://y")).as("literal parts are quoted").isFalse();
    }
}
