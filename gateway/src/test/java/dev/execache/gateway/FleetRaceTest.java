package dev.execache.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.core.StoreGuard;
import dev.execache.core.CachePolicy;
import dev.execache.core.CacheStatus;
import dev.execache.core.CachedExecutor;
import dev.execache.core.ExecutionOutcome;
import dev.execache.core.ExecutionRequest;
import dev.execache.core.Limits;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.Ticker;
import dev.execache.core.spi.CacheStore;
import dev.execache.core.spi.ToolCatalog;
import dev.execache.sandbox.DenoSandbox;
import dev.execache.sandbox.DenoSandboxSettings;
import dev.execache.store.redis.RedisCacheStore;
import dev.execache.store.redis.RedisServerProcess;
import dev.execache.store.redis.RedisStoreSettings;
import dev.execache.store.sqlite.SqliteCacheStore;
import dev.execache.tools.mcp.McpServerSettings;
import dev.execache.tools.mcp.McpToolCatalog;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The write/read race across a fleet: two members, each its own {@link Gateway} with its own
 * store client (so nothing of one member's memory reaches the other), on one shared store (one
 * Redis, one SQLite file), reaching one lab server. A read through member A is held after the
 * server answered it; meanwhile a write through member B starts and ends; then the read goes on.
 */
class FleetRaceTest {
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(20);
    private static final String READ = "acct__get_count";
    private static RedisServerProcess redis;
    private static DenoSandbox sandbox;

    @TempDir
    Path dir;

    private final String prefix = "race-" + UUID.randomUUID() + ":";
    private final List<ToolCatalog> catalogs = new ArrayList<>();
    private final List<CacheStore> stores = new ArrayList<>();

    @BeforeAll
    static void start() throws IOException {
        redis = RedisServerProcess.start();
        sandbox = new DenoSandbox(DenoSandboxSettings.builder().denoExecutable(TestDeno.executable()).warmPoolSize(1)
                .build());
    }

    @AfterAll
    static void stopAll() {
        sandbox.close();
        redis.close();
    }

    @AfterEach
    void stop() {
        catalogs.forEach(ToolCatalog::close);
        stores.forEach(CacheStore::close);
    }

    /** One fleet member: its gateway, and its runs of code through that gateway. */
    private record Member(Gateway tools, CachedExecutor executor) {
        JsonNode call(String tool) {
            return Answers.ofTool(tools.call(tool, Map.of()));
        }

        ExecutionOutcome run(String code) {
            return executor.execute(new ExecutionRequest(code, null, Set.of(), Limits.DEFAULTS));
        }
    }

    private static final McpServerSettings ACCT = new McpServerSettings("acct", "node",
            List.of(Downstream.nodeModules().resolveSibling("lab-server.mjs").toString()), Map.of(), null, true);

    /** A new client of the shared store: another process would have its own. */
    private CacheStore sharedStore(String kind) {
        CacheStore store = switch (kind) {
            case "redis" -> RedisCacheStore.connect(RedisStoreSettings.of(redis.url()).withKeyPrefix(prefix)
                    .withTimeout(Duration.ofSeconds(10)), Clock.systemUTC());
            case "sqlite" -> new SqliteCacheStore(dir.resolve("cache.db"), 100, Clock.systemUTC());
            default -> throw new IllegalArgumentException(kind);
        };
        stores.add(store);
        return store;
    }

    private Member member(ToolCatalog catalog, CacheStore store) throws InterruptedException {
        Downstream.await("the acct server connected", Duration.ofSeconds(60), () -> !catalog.tools().isEmpty());
        MutableToolVersions versions = new MutableToolVersions();
        Gateway tools = Gateway.builder(catalog, StoreGuard.of(store), versions,
                ServerEntry.policy(List.of(new ServerEntry(ACCT, true)), List.of()), CachePolicy.DEFAULTS).build();
        CachedExecutor executor = CachedExecutor.builder(sandbox, store).toolVersions(versions).versionScope("fleet")
                .codeTools(tools).build();
        return new Member(tools, executor);
    }

    /** The lab server, its first read held once answered; a second member reaches it without the hold. */
    private HeldCatalog labServer() {
        McpToolCatalog real = new McpToolCatalog(List.of(ACCT), CALL_TIMEOUT, Duration.ofHours(1), line -> { },
                Clock.systemUTC()).start();
        HeldCatalog held = new HeldCatalog(real, READ);
        catalogs.add(held);
        return held;
    }

    /** While {@code inFlight} waits inside the held read, a write through {@code writer} starts and ends. */
    private static <T> T writeThroughWhileHeld(HeldCatalog catalog, Member writer, Supplier<T> inFlight) throws Exception {
        CompletableFuture<T> reading = CompletableFuture.supplyAsync(inFlight);
        assertThat(catalog.answered.await(2, TimeUnit.MINUTES)).isTrue();
        assertThat(writer.call("acct__increment").get("counter").intValue()).isEqualTo(1);
        catalog.release.countDown();
        return reading.get(2, TimeUnit.MINUTES);
    }



    @ParameterizedTest(name = "on {0}")
    @ValueSource(strings = {"redis", "sqlite"})
    void aReadThroughOneMemberRacingAWriteThroughAnotherIsNotStored(String kind) throws Exception {
        HeldCatalog server = labServer();
        Member a = member(server, sharedStore(kind));
        Member b = member(server.real(), sharedStore(kind));

        JsonNode raced = writeThroughWhileHeld(server, b, () -> a.call(READ));
        JsonNode nextThroughA = a.call(READ);
        JsonNode thenThroughB = b.call(READ);

        assertThat(raced.get("counter").intValue()).isZero();
        assertThat(nextThroughA.get("counter").intValue()).as("the new data").isEqualTo(1);
        assertThat(nextThroughA.get("served").intValue()).as("the server asked again, not the raced read").isEqualTo(2);
        assertThat(thenThroughB).as("the fresh read is shared as usual").isEqualTo(nextThroughA);
    }

    @ParameterizedTest(name = "on {0}")
    @ValueSource(strings = {"redis", "sqlite"})
    void aRunThroughOneMemberWhoseReadRacedAWriteThroughAnotherIsNotStored(String kind) throws Exception {
        HeldCatalog server = labServer();
        Member a = member(server, sharedStore(kind));
        Member b = member(server.real(), sharedStore(kind));
        String code = "return await tools.acct.get_count({})";

        ExecutionOutcome raced = writeThroughWhileHeld(server, b, () -> a.run(code));
        ExecutionOutcome nextThroughB = b.run(code);
        ExecutionOutcome thenThroughA = a.run(code);

        assertThat(Answers.ofRun(raced).get("counter").intValue()).isZero();
        assertThat(raced.notStoredBecause()).contains("was not stored").contains("started or ended while it was asked");
        assertThat(nextThroughB.status()).isEqualTo(CacheStatus.MISS);
        assertThat(Answers.ofRun(nextThroughB).get("counter").intValue()).as("the new data").isEqualTo(1);
        assertThat(nextThroughB.toolCalls()).singleElement().satisfies(call ->
                assertThat(call.status()).as("the raced read was not stored either").isEqualTo(CacheStatus.MISS));
        assertThat(thenThroughA.status()).isEqualTo(CacheStatus.HIT);
        assertThat(Answers.ofRun(thenThroughA).get("counter").intValue()).isEqualTo(1);
    }
}
