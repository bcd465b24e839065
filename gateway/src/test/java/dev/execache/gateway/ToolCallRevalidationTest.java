package dev.execache.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.core.StoreGuard;
import dev.execache.core.CachePolicy;
import dev.execache.core.CacheStatus;
import dev.execache.core.Freshness;
import dev.execache.core.MutableClock;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.ToolCacheRule;
import dev.execache.core.ToolCallOutcome;
import dev.execache.core.ToolValidator;
import dev.execache.core.spi.Counter;
import dev.execache.store.sqlite.SqliteCacheStore;
import dev.execache.tools.mcp.McpToolCatalog;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A single tool call revalidated by the cheap call its rule names ({@code validate_with}), end to
 * end in one process: the tests' lab server (its {@code read_shelf} validated by {@code shelf_info},
 * which says how often the shelf was written) behind the same {@link Gateway} serve uses, a real
 * SQLite file. One fixture for the class; each test reads a shelf of its own.
 */
class ToolCallRevalidationTest {
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(20);
    private static final Duration TTL = Duration.ofSeconds(10);
    private static final MutableClock CLOCK = new MutableClock();
    private static final Map<String, OfferedTool> OFFERED = new ConcurrentHashMap<>();
    private static McpToolCatalog catalog;
    private static SqliteCacheStore store;
    private static Gateway gateway;
    private static List<ServerEntry> servers;

    @BeforeAll
    static void start() throws IOException {
        servers = List.of(new ServerEntry(Downstream.lab("lab", true, Map.of("LAB_SHELVES", "1")), true));
        catalog = new McpToolCatalog(ServerEntry.settings(servers), CALL_TIMEOUT,
                Duration.ofHours(1), line -> { }, Clock.systemUTC()).start();
        Path dir = Files.createTempDirectory("execache-tool-revalidation");
        store = new SqliteCacheStore(dir.resolve("cache.db"), 100, CLOCK);
        gateway = gateway(List.of(ToolCacheRule.cache("lab__read_shelf", TTL, 100)
                .validatedBy(new ToolValidator("lab__shelf_info", Map.of("name", "{shelf}")))));
        gateway.onChange((changed, withdrawn) -> changed.forEach(tool -> OFFERED.put(tool.tool().name(), tool)));
    }

    private static Gateway gateway(List<ToolCacheRule> rules) {
        return Gateway.builder(catalog, StoreGuard.of(store), new MutableToolVersions(), ServerEntry.policy(servers,
                rules), CachePolicy.DEFAULTS).clock(CLOCK).build();
    }

    @AfterAll
    static void stop() {
        catalog.close();
        store.close();
    }

    private static ToolCallOutcome read(String shelf) {
        return gateway.callWithStatus("lab__read_shelf", Map.of("shelf", shelf), null, Freshness.ANY);
    }

    /** The call as an agent makes it through serve: the result with its {@code _meta}. */
    private static CallToolResult readAsAgent(String shelf) {
        return OFFERED.get("lab__read_shelf").call(
                CallToolRequest.builder("lab__read_shelf").arguments(Map.of("shelf", shelf)).build(), RequestOrigin.UNKNOWN);
    }

    /** The reads and the infos of each shelf the server served so far. */
    private static JsonNode served() {
        return Answers.ofTool(catalog.call("lab__shelf_calls", Map.of()));
    }

    @Test
    void anExpiredAnswerWhoseInfoIsUnchangedIsRevalidatedWithOneInfoCallAndNoRead() {
        assertThat(read("a").status()).isEqualTo(CacheStatus.MISS);
        JsonNode before = served();
        long revalidations = store.counters().totals().getOrDefault(Counter.REVALIDATIONS, 0L);
        CLOCK.advance(TTL.plusSeconds(1));

        CallToolResult revalidated = readAsAgent("a");

        JsonNode after = served();
        @SuppressWarnings("unchecked")
        Map<String, Object> meta = (Map<String, Object>) revalidated.meta().get("dev.execache/cache");
        assertThat(meta).containsEntry("status", "revalidated").containsEntry("ageSeconds", 0L)
                .containsEntry("freshForSeconds", TTL.toSeconds());
        assertThat(Answers.ofTool(dev.execache.core.ToolResult.ok(toJson(revalidated))).path("holds").asText())
                .isEqualTo("apples");
        assertThat(after.at("/infos/a").asInt()).isEqualTo(before.at("/infos/a").asInt() + 1);
        assertThat(after.at("/reads/a").asInt()).as("the shelf was not read again").isEqualTo(before.at("/reads/a").asInt());
        assertThat(store.counters().totals().get(Counter.REVALIDATIONS)).isEqualTo(revalidations + 1);
        assertThat(read("a").status()).as("fresh again").isEqualTo(CacheStatus.HIT);
    }

    @Test
    void anExpiredAnswerWhoseInfoChangedIsReadOnceAndTheNewInfoRecorded() {
        read("b");
        // written past the gateway: only the validator can tell
        catalog.call("lab__put_on_shelf", Map.of("shelf", "b", "value", "butter"));
        JsonNode before = served();
        CLOCK.advance(TTL.plusSeconds(1));

        ToolCallOutcome changed = read("b");

        JsonNode after = served();
        assertThat(changed.status()).isEqualTo(CacheStatus.MISS);
        assertThat(Answers.ofTool(changed.result()).path("holds").asText()).isEqualTo("butter");
        assertThat(after.at("/reads/b").asInt()).isEqualTo(before.at("/reads/b").asInt() + 1);
        assertThat(after.at("/infos/b").asInt()).as("one info call").isEqualTo(before.at("/infos/b").asInt() + 1);
        CLOCK.advance(TTL.plusSeconds(1));
        assertThat(read("b").status()).isEqualTo(CacheStatus.REVALIDATED);
    }

    @Test
    void aWriteThroughTheGatewayIsNeverFollowedByAHit() {
        read("c");
        assertThat(read("c").status()).isEqualTo(CacheStatus.HIT);

        gateway.call("lab__put_on_shelf", Map.of("shelf", "c", "value", "cream"));
        ToolCallOutcome afterWrite = read("c");

        assertThat(afterWrite.status()).isEqualTo(CacheStatus.MISS);
        assertThat(Answers.ofTool(afterWrite.result()).path("holds").asText()).isEqualTo("cream");
    }

    @Test
    void aValidatorThatIsMissingMayWriteOrCannotBeFilledIsNamedAndNotUsed() {
        Gateway wrong = gateway(List.of(
                ToolCacheRule.cache("lab__shelf_a", TTL, 100).validatedBy(ToolValidator.sameArguments("lab__shelf_size")),
                ToolCacheRule.cache("lab__shelf_b", TTL, 100).validatedBy(ToolValidator.sameArguments("lab__put_on_shelf")),
                ToolCacheRule.cache("lab__shelf_c", TTL, 100)
                        .validatedBy(new ToolValidator("lab__shelf_info", Map.of("name", "{room}"))),
                ToolCacheRule.cache("lab__read_shelf", TTL, 100).validatedBy(ToolValidator.sameArguments("lab__shelf_info"))));

        assertThat(wrong.validatorProblems()).containsExactly(
                "rule lab__read_shelf: validate_with lab__shelf_info requires the argument name, which lab__read_shelf"
                        + " does not take (give arguments: {name: \"{ARGUMENT}\"})",
                "rule lab__shelf_a: validate_with lab__shelf_size is not a tool of any server",
                "rule lab__shelf_b: validate_with lab__put_on_shelf is not read-only (its annotations do not say"
                        + " readOnlyHint: true)",
                "rule lab__shelf_c: validate_with arguments.name: lab__shelf_c has no argument room (its arguments: ms)");
        assertThat(wrong.decision("lab__shelf_a").why()).isEqualTo("rule lab__shelf_a; not revalidated:"
                + " validate_with lab__shelf_size is not a tool of any server");
        assertThat(gateway.validatorProblems()).isEmpty();
        assertThat(gateway.decision("lab__read_shelf").why()).isEqualTo("rule lab__read_shelf; revalidated by lab__shelf_info");
    }

    private static String toJson(CallToolResult result) {
        try {
            return dev.execache.gateway.Json.MAPPER.writeValueAsString(result);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
}
