package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.cli.output.OpenMetrics;
import dev.execache.cli.output.StoreDescription;
import dev.execache.core.CachePolicy;
import dev.execache.core.CachedExecutor;
import dev.execache.core.ExecutionRequest;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.SwitchableStore;
import dev.execache.mcp.server.http.HttpServeSettings;
import dev.execache.mcp.server.http.McpHttpServer;
import dev.execache.mcp.server.RawHttp;
import dev.execache.gateway.ServeTools;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code serve --http}'s figures as app-cli hands them in: {@code /metrics} written by {@link
 * OpenMetrics}, and the dashboard's document, while the store is in an outage.
 */
class HttpFiguresTest {
    @TempDir
    static Path dir;

    @Test
    void aStoreInAnOutageStillGivesTheFiguresItCanAndSaysSo() throws Exception {
        ServeFixture fixture = new ServeFixture(dir, Map.of());
        SwitchableStore failing = new SwitchableStore(fixture.store);
        CachedExecutor executor = CachedExecutor.builder(fixture.sandbox,
                failing).toolVersions(new MutableToolVersions(Map.of())).clock(fixture.clock).build();
        StoreDescription store = StoreDescription.of(fixture.settings);
        HttpServeSettings settings = HttpServeSettings.of(InetAddress.getLoopbackAddress(), 0, List.of(), Set.of(),
                Duration.ofSeconds(5));
        failing.fail(true);
        executor.execute(ExecutionRequest.of(ServeFixture.TWO, null));
        try (McpHttpServer server = new McpHttpServer(ServeTools.builder(executor, fixture.serveSettings).build(),
                "test", settings,
                () -> OpenMetrics.write(executor.policy().stats(), store, executor.policy().storeInOutage())).start();
                McpHttpServer broken = new McpHttpServer(ServeTools.builder(executor, fixture.serveSettings).build(),
                        "test", settings,
                        () -> {
                            throw new IllegalStateException("the store went away");
                        }).start()) {
            RawHttp.Answer metrics = RawHttp.send(server.port(), "GET", "/metrics", null, Map.of());
            RawHttp.Answer data = RawHttp.send(server.port(), "GET", "/dashboard.json", null, Map.of());
            RawHttp.Answer unread = RawHttp.send(broken.port(), "GET", "/metrics", null, Map.of());

            assertThat(metrics.status()).isEqualTo(200);
            assertThat(metrics.body()).contains("\nexecache_store_outage 1\n", "\nexecache_misses_total 1\n");
            assertThat(data.status()).isEqualTo(200);
            assertThat(data.json().at("/health/outage").booleanValue()).isTrue();
            assertThat(data.json().at("/health/says").textValue()).contains("uncached");
            assertThat(data.json().at("/totals/misses").longValue()).isEqualTo(1);
            assertThat(unread.status()).isEqualTo(503);
            assertThat(unread.body()).isEqualTo("the figures could not be read: the store went away\n");
        }
    }
}
