package dev.execache.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.core.StoreGuard;
import dev.execache.core.CachePolicy;
import dev.execache.core.CacheStats;
import dev.execache.core.CacheStatus;
import dev.execache.core.CachedExecutor;
import dev.execache.core.ExecutionOutcome;
import dev.execache.core.ExecutionRequest;
import dev.execache.core.Limits;
import dev.execache.core.MutableClock;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.ToolCacheRule;
import dev.execache.core.spi.CodeTools;
import dev.execache.core.spi.Sandbox;
import dev.execache.sandbox.DenoSandbox;
import dev.execache.sandbox.DenoSandboxSettings;
import dev.execache.store.sqlite.SqliteCacheStore;
import dev.execache.tools.mcp.McpToolCatalog;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A stale run revalidated, not re-run, end to end in one process: a real Deno sandbox (its runs
 * counted), a real SQLite file, and the tests' lab server behind the same {@link Gateway} serve
 * uses; its shelves answer the same until {@code put_on_shelf} changes one. One fixture for the
 * class; each test's code carries a tag of its own, so their runs never meet.
 */
class RevalidationTest {
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(20);
    private static final Duration SHELF_TTL = Duration.ofSeconds(10);
    /** A run reading three shelves together, each read taking 300 ms at the server. */
    private static final String READS_THREE = """
            const [a, b, c] = await Promise.all([tools.lab.shelf_a({ms: 300}), tools.lab.shelf_b({ms: 300}),
                tools.lab.shelf_c({ms: 300})]);
            return context.tag + ": " + [a.holds, b.holds, c.holds].join(", ");
            """;
    private static final AtomicInteger DENO_RUNS = new AtomicInteger();
    private static DenoSandbox deno;
    private static McpToolCatalog catalog;
    private static SqliteCacheStore store;
    private static Gateway gateway;
    private static CachedExecutor executor;
    private static final MutableClock CLOCK = new MutableClock();
    private static final MutableToolVersions VERSIONS = new MutableToolVersions();

    @BeforeAll
    static void start() throws IOException {
        deno = new DenoSandbox(DenoSandboxSettings.builder().denoExecutable(TestDeno.executable()).warmPoolSize(1)
                .build());
        Sandbox counted = new Sandbox() {
            @Override
            public dev.execache.core.ExecutionResult execute(ExecutionRequest request, CodeTools tools) {
                DENO_RUNS.incrementAndGet();
                return deno.execute(request, tools);
            }
        };
        List<ServerEntry> servers = List.of(new ServerEntry(Downstream.lab("lab", true,
                Map.of("LAB_SHELVES", "1")), true));
        catalog = new McpToolCatalog(ServerEntry.settings(servers), CALL_TIMEOUT,
                Duration.ofHours(1), line -> { }, Clock.systemUTC()).start();
        Path dir = Files.createTempDirectory("execache-revalidation");
        store = new SqliteCacheStore(dir.resolve("cache.db"), 100, CLOCK);
        gateway = Gateway.builder(catalog, StoreGuard.of(store), VERSIONS, ServerEntry.policy(servers,
                List.of(ToolCacheRule.cache("lab__shelf_*", SHELF_TTL, 100))), CachePolicy.DEFAULTS).clock(CLOCK)
                        .build();
        executor = CachedExecutor.builder(counted, store).toolVersions(VERSIONS).clock(CLOCK).codeTools(gateway)
                .build();
    }

    @AfterAll
    static void stop() {
        catalog.close();
        store.close();
        deno.close();
    }

    @BeforeEach
    void shelvesHoldWhatTheyHeldAtFirst() {
        for (Map.Entry<String, String> shelf : Map.of("a", "apples", "b", "bread", "c", "cheese").entrySet()) {
            gateway.call("lab__put_on_shelf", Map.of("shelf", shelf.getKey(), "value", shelf.getValue()));
        }
        shelfCalls();
    }

    private static ExecutionOutcome run(String tag) {
        return executor.execute(new ExecutionRequest(READS_THREE, Map.of("tag", tag), Set.of(), Limits.DEFAULTS));
    }

    /** The shelf reads the server served, by shelf, and the most in flight at once since the last asking. */
    private static JsonNode shelfCalls() {
        return Answers.ofTool(catalog.call("lab__shelf_calls", Map.of()));
    }

    @Test
    void unchangedAnswersAfterTheTtlAreRevalidatedWithoutStartingDenoTheThreeCallsMadeAtOnce() {
        ExecutionOutcome first = run("unchanged");
        int denoRuns = DENO_RUNS.get();
        JsonNode before = shelfCalls();
        CLOCK.advance(SHELF_TTL.plusSeconds(1));

        ExecutionOutcome stale = run("unchanged");

        assertThat(first.status()).isEqualTo(CacheStatus.MISS);
        assertThat(stale.status()).isEqualTo(CacheStatus.REVALIDATED);
        assertThat(stale.result().value()).isEqualTo(first.result().value()).isEqualTo("\"unchanged: apples, bread, cheese\"");
        assertThat(DENO_RUNS).hasValue(denoRuns);
        JsonNode after = shelfCalls();
        assertThat(after.get("mostAtOnce").intValue()).isEqualTo(3);
        for (String shelf : List.of("a", "b", "c")) {
            assertThat(after.at("/reads/" + shelf).intValue()).isEqualTo(before.at("/reads/" + shelf).intValue() + 1);
        }
        assertThat(stale.expiresAt()).isEqualTo(CLOCK.instant().plus(SHELF_TTL));
        assertThat(run("unchanged").status()).isEqualTo(CacheStatus.HIT);
        CacheStats stats = executor.policy().stats();
        assertThat(stats.revalidations()).isGreaterThanOrEqualTo(1);
        assertThat(CachedExecutor.traceOf(store.peek(first.key()).orElseThrow()))
                .extracting(CachedExecutor.TracedCall::tool)
                .containsExactly("lab__shelf_a", "lab__shelf_b", "lab__shelf_c");
    }

    @Test
    void oneChangedAnswerRunsTheCodeOnTheAnswersJustFetchedAskingNoShelfTwice() {
        run("changed");
        CLOCK.advance(SHELF_TTL.plusSeconds(1));
        gateway.call("lab__put_on_shelf", Map.of("shelf", "b", "value", "butter"));
        int denoRuns = DENO_RUNS.get();
        JsonNode before = shelfCalls();

        ExecutionOutcome stale = run("changed");

        assertThat(stale.status()).isEqualTo(CacheStatus.MISS);
        assertThat(stale.result().value()).isEqualTo("\"changed: apples, butter, cheese\"");
        assertThat(DENO_RUNS).hasValue(denoRuns + 1);
        JsonNode after = shelfCalls();
        for (String shelf : List.of("a", "b", "c")) {
            assertThat(after.at("/reads/" + shelf).intValue()).as("reads of shelf " + shelf)
                    .isEqualTo(before.at("/reads/" + shelf).intValue() + 1);
        }
        assertThat(executor.policy().stats().revalidationsChanged()).isGreaterThanOrEqualTo(1);
    }

    @Test
    void aToolWhoseSchemaChangedButWhoseAnswersDidNotIsRevalidatedNotRun() throws InterruptedException {
        ExecutionOutcome first = run("schema");
        String before = VERSIONS.versions().get("lab__shelf_c");
        gateway.call("lab__set_description", Map.of("tool", "shelf_c", "description", "What shelf c holds now.",
                "notify", true));
        Downstream.await("the new digest of lab__shelf_c", CALL_TIMEOUT,
                () -> !before.equals(VERSIONS.versions().get("lab__shelf_c")));
        int denoRuns = DENO_RUNS.get();

        ExecutionOutcome again = run("schema");

        assertThat(again.status()).isEqualTo(CacheStatus.REVALIDATED);
        assertThat(again.result().value()).isEqualTo(first.result().value());
        assertThat(DENO_RUNS).hasValue(denoRuns);
        assertThat(store.peek(first.key()).orElseThrow().dependsOnTools())
                .containsEntry("lab__shelf_c", VERSIONS.versions().get("lab__shelf_c"));
    }

    @Test
    void aWriteToTheServerInBetweenIsNeverAHitWithoutRevalidation() {
        run("write");
        assertThat(run("write").status()).isEqualTo(CacheStatus.HIT);

        gateway.call("lab__put_on_shelf", Map.of("shelf", "a", "value", "apples"));
        ExecutionOutcome sameValue = run("write");
        gateway.call("lab__put_on_shelf", Map.of("shelf", "a", "value", "apricots"));
        ExecutionOutcome newValue = run("write");

        assertThat(sameValue.status()).isEqualTo(CacheStatus.REVALIDATED);
        assertThat(newValue.status()).isEqualTo(CacheStatus.MISS);
        assertThat(newValue.result().value()).isEqualTo("\"write: apricots, bread, cheese\"");
    }
}
