package dev.execache.tools.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A 2026-07-28 url server that says its tools changed on a {@code subscriptions/listen} stream
 * (its lists live an hour, so only the stream can tell in time).
 */
class UrlServerSubscriptionTest {
    private static HttpLab lab;

    @BeforeAll
    static void startLab() throws IOException {
        lab = HttpLab.start("--era", "2026", "--ttl-ms", "3600000");
    }

    @AfterAll
    static void stopLab() throws InterruptedException {
        lab.close();
    }

    @Test
    void toolsListChangedOnTheListenStreamRediscoversTheTools() throws InterruptedException {
        try (McpToolCatalog catalog = new McpToolCatalog(List.of(new UrlServerSettings("modern", lab.url(), Map.of(), true)),
                Duration.ofSeconds(20), Duration.ofHours(1), line -> { }, Clock.systemUTC()).start()) {
            CountDownLatch changed = new CountDownLatch(1);
            catalog.addListener(tools -> {
                if (tools.stream().anyMatch(tool -> "Fails, told on the stream.".equals(tool.definition().get("description")))) {
                    changed.countDown();
                }
            });

            assertThat(catalog.call("modern__set_description",
                    Map.of("tool", "fail", "description", "Fails, told on the stream.", "notify", true)).isError()).isFalse();

            assertThat(changed.await(60, TimeUnit.SECONDS)).as("the catalog saw the new description").isTrue();
        }
    }
}
