package dev.execache.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.core.StoreGuard;
import dev.execache.core.CachePolicy;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.ToolResult;
import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.CacheStore;
import dev.execache.store.memory.MemoryCacheStore;
import dev.execache.tools.mcp.HttpLab;
import dev.execache.tools.mcp.McpToolCatalog;
import dev.execache.tools.mcp.UrlServerSettings;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Two configurations of one url server with different header values, in front of one store:
 * neither is ever served the other's answers; an identical configuration shares them. The lab
 * server here takes any token, as a server whose answers depend on who asks would.
 */
class UrlServerCredentialsTest {
    private static HttpLab lab;

    private final List<McpToolCatalog> catalogs = new ArrayList<>();
    private final CacheStore store = new MemoryCacheStore(100, Clock.systemUTC());

    @BeforeAll
    static void startLab() throws IOException {
        lab = HttpLab.start("--era", "2025");
    }

    @AfterAll
    static void stopLab() throws InterruptedException {
        lab.close();
    }

    @AfterEach
    void closeCatalogs() {
        catalogs.forEach(McpToolCatalog::close);
    }

    /** A gateway of its own (as another process would be) on the shared store. */
    private Gateway gateway(String token) {
        UrlServerSettings settings = new UrlServerSettings("remote", lab.url(), Map.of("Authorization", "Bearer ${TOKEN}"),
                true, null, Map.of("TOKEN", token));
        McpToolCatalog catalog = new McpToolCatalog(List.of(settings), Duration.ofSeconds(20), Duration.ofHours(1),
                line -> { }, Clock.systemUTC()).start();
        catalogs.add(catalog);
        return Gateway.builder(catalog, StoreGuard.of(store), new MutableToolVersions(),
                ServerEntry.policy(List.of(new ServerEntry(settings, true)), List.of()), CachePolicy.DEFAULTS).build();
    }

    private static JsonNode answer(ToolResult result) throws IOException {
        assertThat(result.isError()).as(result.json()).isFalse();
        return Json.MAPPER.readTree(Json.MAPPER.readTree(result.json()).at("/content/0/text").textValue());
    }

    @Test
    void differentHeaderValuesNeverShareCachedAnswersAndEqualOnesDo() throws IOException {
        String alice = "alice-6d0e-never-stored";
        Gateway asAlice = gateway(alice);
        Gateway asBob = gateway("bob-91c3-never-stored");
        Gateway asAliceAgain = gateway(alice);

        JsonNode first = answer(asAlice.call("remote__get_count", Map.of("who", "shared-args")));
        JsonNode bobs = answer(asBob.call("remote__get_count", Map.of("who", "shared-args")));
        JsonNode alicesAgain = answer(asAliceAgain.call("remote__get_count", Map.of("who", "shared-args")));

        assertThat(bobs.get("served").intValue()).as("bob's call went to the server").isEqualTo(first.get("served").intValue() + 1);
        assertThat(alicesAgain).as("the same configuration shares").isEqualTo(first);
        assertThat(asAliceAgain.stats().get("remote__get_count").misses()).as("the store's counters").isEqualTo(2);
        assertThat(asAliceAgain.stats().get("remote__get_count").hits()).isEqualTo(1);
        for (CacheEntry entry : store.entries()) {
            assertThat(entry.key() + entry.label() + entry.value()).doesNotContain(alice).doesNotContain("bob-91c3");
        }
    }
}
