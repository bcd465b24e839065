package dev.execache.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.core.StoreGuard;
import dev.execache.core.CachePolicy;
import dev.execache.core.CacheStats;
import dev.execache.core.CacheStatus;
import dev.execache.core.Freshness;
import dev.execache.core.MutableClock;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.ToolCacheRule;
import dev.execache.core.ToolCallOutcome;
import dev.execache.core.spi.CacheStore;
import dev.execache.store.memory.MemoryCacheStore;
import dev.execache.store.sqlite.SqliteCacheStore;
import dev.execache.tools.mcp.McpServerSettings;
import dev.execache.tools.mcp.McpToolCatalog;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Freshness through the gateway with real servers: {@code @modelcontextprotocol/server-filesystem}
 * whose files change on disk outside execache, and the tests' lab server saying {@code no-cache}
 * (SEP-2419) in its results. Time is the test's clock: a TTL passes without waiting for it.
 */
class FreshnessGatewayTest {
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration RULE_TTL = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    private final MutableClock clock = new MutableClock();
    private final List<McpToolCatalog> catalogs = new ArrayList<>();
    private final List<CacheStore> stores = new ArrayList<>();

    @AfterEach
    void stop() {
        catalogs.forEach(McpToolCatalog::close);
        stores.forEach(CacheStore::close);
    }

    /** @param readsFresh whether the server's reads are asked every time, as a local server's are by default */
    private Gateway gateway(McpServerSettings server, List<ToolCacheRule> rules, boolean readsFresh,
            CacheStore store) throws InterruptedException {
        McpToolCatalog catalog = new McpToolCatalog(List.of(server), CALL_TIMEOUT, Duration.ofHours(1), line -> { },
                Clock.systemUTC()).start();
        catalogs.add(catalog);
        Downstream.await("server " + server.name() + " connected", Duration.ofSeconds(60), () -> !catalog.tools().isEmpty());
        GatewayPolicy policy = new GatewayPolicy(List.of(new GatewayPolicy.Server(server.name(), true, true, true, true,
                null, readsFresh)), rules);
        return Gateway.builder(catalog, StoreGuard.of(store), new MutableToolVersions(), policy, CachePolicy.DEFAULTS)
                .clock(clock).build();
    }

    private MemoryCacheStore memory() {
        MemoryCacheStore store = new MemoryCacheStore(100, clock);
        stores.add(store);
        return store;
    }

    private Path files() throws IOException {
        Path root = dir.resolve("files");
        Files.createDirectories(root);
        Files.writeString(root.resolve("notes.txt"), "first");
        Files.writeString(root.resolve("other.txt"), "other");
        return root.toRealPath();
    }

    private static String text(ToolCallOutcome outcome) {
        try {
            return Json.MAPPER.readTree(outcome.result().json()).at("/content/0/text").textValue();
        } catch (IOException e) {
            throw new AssertionError("not a tool result: " + outcome.result().json(), e);
        }
    }

    private static ToolCallOutcome read(Gateway gateway, Path file, Freshness freshness) {
        return gateway.callWithStatus("fs__read_text_file", Map.of("path", file.toString()), "test", freshness);
    }

    @Test
    void aLocalServersReadIsAskedEveryTimeSoAFileChangedOnDiskIsReadFreshAtOnceAndCountedUnderItsOwnReason()
            throws Exception {
        Path root = files();
        MemoryCacheStore store = memory();
        Gateway gateway = gateway(Downstream.filesystem(root),
                List.of(ToolCacheRule.cache("fs__list_directory", RULE_TTL, 100)), true, store);
        Map<String, Object> listed = Map.of("path", root.toString());
        gateway.callWithStatus("fs__list_directory", listed, "test", Freshness.ANY);
        ToolCallOutcome before = read(gateway, root.resolve("notes.txt"), Freshness.ANY);

        Files.writeString(root.resolve("notes.txt"), "second");
        ToolCallOutcome after = read(gateway, root.resolve("notes.txt"), Freshness.ANY);

        assertThat(text(before)).isEqualTo("first");
        assertThat(text(after)).isEqualTo("second");
        assertThat(after.status()).isEqualTo(CacheStatus.BYPASS);
        assertThat(after.notCachedBecause()).startsWith("a local server's read, asked every time");
        assertThat(gateway.decision("fs__read_text_file").cached()).isFalse();
        assertThat(gateway.decision("fs__read_text_file").freshRead()).isTrue();
        assertThat(CacheStats.of(store).uncacheable()).containsEntry("local_server", 2L);
        // a read is not a write: what a rule keeps of the server stays
        assertThat(gateway.callWithStatus("fs__list_directory", listed, "test", Freshness.ANY).status())
                .isEqualTo(CacheStatus.HIT);
        assertThat(CacheStats.of(store).removalsByCause()).containsEntry("write", 0L);
        assertThat(store.size()).isEqualTo(1);
    }

    @Test
    void aLocalServerThatSaysItsAnswersAreMeantToBeReusedIsCachedFromThenOn() throws Exception {
        MemoryCacheStore store = memory();
        Gateway gateway = gateway(Downstream.lab("lab", true, Map.of("LAB_CACHE_HINT", "cache")), List.of(), true,
                store);

        ToolCallOutcome first = gateway.callWithStatus("lab__get_count", Map.of(), "test", Freshness.ANY);
        ToolCallOutcome second = gateway.callWithStatus("lab__get_count", Map.of(), "test", Freshness.ANY);
        ToolCallOutcome third = gateway.callWithStatus("lab__get_count", Map.of(), "test", Freshness.ANY);

        assertThat(first.status()).isEqualTo(CacheStatus.BYPASS);
        assertThat(second.status()).isEqualTo(CacheStatus.MISS);
        assertThat(third.status()).isEqualTo(CacheStatus.HIT);
        assertThat(served(third)).isEqualTo(2);
        assertThat(gateway.decision("lab__get_count").why()).contains("its server said cache_hint: cache");
    }

    @Test
    void withARuleThatForcesCachingAChangedFileIsReadFreshOnceTheRulesTtlHasPassed() throws Exception {
        Path root = files();
        Gateway gateway = gateway(Downstream.filesystem(root),
                List.of(ToolCacheRule.cache("fs__read_text_file", RULE_TTL, 100)), true, memory());
        read(gateway, root.resolve("notes.txt"), Freshness.ANY);

        Files.writeString(root.resolve("notes.txt"), "second");
        clock.advance(RULE_TTL.minusSeconds(1));
        ToolCallOutcome stale = read(gateway, root.resolve("notes.txt"), Freshness.ANY);
        clock.advance(Duration.ofSeconds(1));
        ToolCallOutcome fresh = read(gateway, root.resolve("notes.txt"), Freshness.ANY);

        assertThat(stale.status()).isEqualTo(CacheStatus.HIT);
        assertThat(text(stale)).isEqualTo("first");
        assertThat(stale.storedAt()).isEqualTo(clock.instant().minus(RULE_TTL));
        assertThat(fresh.status()).isEqualTo(CacheStatus.MISS);
        assertThat(text(fresh)).isEqualTo("second");
    }

    @Test
    void aFreshRequestAnswersTheNewContentAtOnceAndReplacesTheStoredOne() throws Exception {
        Path root = files();
        Gateway gateway = gateway(Downstream.filesystem(root),
                List.of(ToolCacheRule.cache("fs__read_text_file", RULE_TTL, 100)), true, memory());
        read(gateway, root.resolve("notes.txt"), Freshness.ANY);
        Files.writeString(root.resolve("notes.txt"), "second");
        clock.advance(Duration.ofSeconds(10));

        ToolCallOutcome young = read(gateway, root.resolve("notes.txt"), Freshness.maxAge(Duration.ofSeconds(10)));
        ToolCallOutcome fresh = read(gateway, root.resolve("notes.txt"), Freshness.NO_CACHE);
        ToolCallOutcome next = read(gateway, root.resolve("notes.txt"), Freshness.ANY);

        assertThat(text(young)).as("young enough for max-age=10").isEqualTo("first");
        assertThat(fresh.status()).isEqualTo(CacheStatus.MISS);
        assertThat(text(fresh)).isEqualTo("second");
        assertThat(next.status()).isEqualTo(CacheStatus.HIT);
        assertThat(text(next)).isEqualTo("second");
        assertThat(next.storedAt()).isEqualTo(clock.instant());
    }

    @Test
    void aResultWithTheServersNoCacheHintIsNotStored() throws Exception {
        MemoryCacheStore store = memory();
        Gateway gateway = gateway(Downstream.lab("lab", true, Map.of("LAB_CACHE_HINT", "no-cache")), List.of(),
                false, store);

        ToolCallOutcome first = gateway.callWithStatus("lab__get_count", Map.of(), "test", Freshness.ANY);
        ToolCallOutcome second = gateway.callWithStatus("lab__get_count", Map.of(), "test", Freshness.ANY);

        assertThat(first.notCachedBecause()).isEqualTo("the server said not to cache it (cache_hint: no-cache)");
        assertThat(served(second)).isEqualTo(2);
        assertThat(store.size()).isZero();
        assertThat(CacheStats.of(store).uncacheable()).containsEntry("server_hint", 2L);
    }

    private static int served(ToolCallOutcome outcome) throws IOException {
        JsonNode answer = Json.MAPPER.readTree(text(outcome));
        return answer.get("served").intValue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"memory", "sqlite"})
    void writesThroughTheGatewayAreCountedAsCallsOfTheirToolAndTheirRemovalsAsInvalidationsByWrite(String kind)
            throws Exception {
        Path root = files();
        CacheStore store = kind.equals("memory") ? memory() : new SqliteCacheStore(dir.resolve("cache.db"), 100, clock);
        stores.add(store);
        Gateway gateway = gateway(Downstream.filesystem(root),
                List.of(ToolCacheRule.cache("fs__read_text_file", RULE_TTL, 100)), true, store);
        read(gateway, root.resolve("notes.txt"), Freshness.ANY);
        read(gateway, root.resolve("other.txt"), Freshness.ANY);

        gateway.callWithStatus("fs__write_file", Map.of("path", root.resolve("notes.txt").toString(), "content", "third"),
                "test", Freshness.ANY);
        ToolCallOutcome after = read(gateway, root.resolve("notes.txt"), Freshness.ANY);
        gateway.clear("fs__*");

        CacheStats stats = CacheStats.of(store);
        assertThat(text(after)).isEqualTo("third");
        assertThat(stats.tools().get("fs__write_file").calls()).isEqualTo(1);
        assertThat(stats.tools().get("fs__read_text_file").calls()).isEqualTo(3);
        assertThat(stats.removalsByCause()).containsEntry("write", 2L).containsEntry("hand", 1L)
                .containsEntry("version", 0L);
        assertThat(stats.invalidations()).isEqualTo(3);
    }
}
