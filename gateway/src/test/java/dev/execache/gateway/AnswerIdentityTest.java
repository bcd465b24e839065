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
import dev.execache.core.MutableClock;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.Ticker;
import dev.execache.core.ToolCacheRule;
import dev.execache.core.ToolCallRecord;
import dev.execache.core.spi.CacheStore;
import dev.execache.core.spi.ToolCatalog;
import dev.execache.sandbox.DenoSandbox;
import dev.execache.sandbox.DenoSandboxSettings;
import dev.execache.store.memory.MemoryCacheStore;
import dev.execache.store.sqlite.SqliteCacheStore;
import dev.execache.tools.mcp.McpServerSettings;
import dev.execache.tools.mcp.McpToolCatalog;
import dev.execache.core.CapturedLog;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Whose answer, and for how long, in process: real lab servers (the tests' own MCP server, which
 * answers {@code private_items} with the account its environment names) behind the same
 * {@link Gateway} serve uses, real stores, a real Deno for code.
 */
class AnswerIdentityTest {
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(20);
    private static final String ALICE_TOKEN = "alice-token-5f1c9e2b7d4a";
    private static final String BOB_TOKEN = "bob-token-83e0a61c2f95";
    private static final String READ = "return await tools.acct.private_items({})";
    private static DenoSandbox sandbox;

    @TempDir
    Path dir;

    private final List<ToolCatalog> catalogs = new ArrayList<>();
    private final List<CacheStore> stores = new ArrayList<>();

    @BeforeAll
    static void startSandbox() throws IOException {
        sandbox = new DenoSandbox(DenoSandboxSettings.builder().denoExecutable(TestDeno.executable()).warmPoolSize(1)
                .build());
    }

    @AfterAll
    static void closeSandbox() {
        sandbox.close();
    }

    @AfterEach
    void stop() {
        catalogs.forEach(ToolCatalog::close);
        stores.forEach(CacheStore::close);
    }

    /** One project's view: its own servers and tool versions over a store it may share with others. */
    private record Project(Gateway tools, CachedExecutor executor, MutableToolVersions versions) {
        JsonNode call(String tool) {
            return Answers.ofTool(tools.call(tool, Map.of()));
        }

        ExecutionOutcome run(String code) {
            return executor.execute(new ExecutionRequest(code, null, Set.of(), Limits.DEFAULTS));
        }
    }

    private static McpServerSettings acct(Map<String, String> env) {
        return new McpServerSettings("acct", "node", List.of(Downstream.nodeModules().resolveSibling("lab-server.mjs")
                .toString()), env, null, true);
    }

    private static Map<String, String> account(String name, String token) {
        return Map.of("LAB_ACCOUNT", name, "LAB_TOKEN", token);
    }

    private Project project(String scope, McpServerSettings server, CacheStore store, Clock clock,
            List<ToolCacheRule> rules) throws InterruptedException {
        McpToolCatalog catalog = new McpToolCatalog(List.of(server), CALL_TIMEOUT, Duration.ofHours(1), line -> { },
                Clock.systemUTC()).start();
        catalogs.add(catalog);
        return project(scope, server, catalog, store, clock, rules);
    }

    private Project project(String scope, McpServerSettings server, ToolCatalog catalog, CacheStore store, Clock clock,
            List<ToolCacheRule> rules) throws InterruptedException {
        Downstream.await("the acct server connected", Duration.ofSeconds(60), () -> !catalog.tools().isEmpty());
        MutableToolVersions versions = new MutableToolVersions();
        Gateway tools = Gateway.builder(catalog, StoreGuard.of(store), versions,
                ServerEntry.policy(List.of(new ServerEntry(server, true)), rules), CachePolicy.DEFAULTS).clock(clock)
                .build();
        CachedExecutor executor = CachedExecutor.builder(sandbox, store).toolVersions(versions)
                .clock(clock).versionScope(scope)
                .codeTools(tools).build();
        return new Project(tools, executor, versions);
    }

    private SqliteCacheStore sqlite(Path file) {
        SqliteCacheStore store = new SqliteCacheStore(file, 100, Clock.systemUTC());
        stores.add(store);
        return store;
    }



    /** Every byte of the store's files (the database and its write-ahead log), as Latin-1 text. */
    private static String bytesOf(Path file) throws IOException {
        StringBuilder all = new StringBuilder();
        try (Stream<Path> files = Files.list(file.getParent())) {
            for (Path one : files.filter(path -> path.getFileName().toString().startsWith(file.getFileName().toString()))
                    .toList()) {
                all.append(new String(Files.readAllBytes(one), StandardCharsets.ISO_8859_1));
            }
        }
        return all.toString();
    }

    @Test
    void twoProjectsWithOtherCredentialsOnOneSqliteFileGetTheirOwnAnswersDirectlyAndThroughCode() throws Exception {
        Path file = dir.resolve("cache.db");
        try (CapturedLog log = new CapturedLog()) {
            Project alice = project("project-a", acct(account("alice", ALICE_TOKEN)), sqlite(file), Clock.systemUTC(),
                    List.of());
            Project bob = project("project-b", acct(account("bob", BOB_TOKEN)), sqlite(file), Clock.systemUTC(),
                    List.of());

            assertThat(alice.call("acct__private_items").get("account").textValue()).isEqualTo("alice");
            assertThat(bob.call("acct__private_items").get("account").textValue()).isEqualTo("bob");
            JsonNode aliceAgain = alice.call("acct__private_items");
            assertThat(aliceAgain.get("account").textValue()).isEqualTo("alice");
            assertThat(aliceAgain.get("served").intValue()).as("a hit of alice's own answer").isEqualTo(1);

            ExecutionOutcome alicesRun = alice.run(READ);
            ExecutionOutcome bobsRun = bob.run(READ);
            assertThat(Answers.ofRun(alicesRun).get("account").textValue()).isEqualTo("alice");
            assertThat(bobsRun.status()).as("bob's run is not a hit of alice's").isEqualTo(CacheStatus.MISS);
            assertThat(Answers.ofRun(bobsRun).get("account").textValue()).isEqualTo("bob");
            assertThat(bobsRun.key()).isNotEqualTo(alicesRun.key());
            assertThat(alice.run(READ).status()).isEqualTo(CacheStatus.HIT);
            assertThat(Answers.ofRun(bob.run(READ)).get("account").textValue()).isEqualTo("bob");

            String stored = bytesOf(file);
            assertThat(stored).contains("acct__private_items").doesNotContain(ALICE_TOKEN).doesNotContain(BOB_TOKEN);
            assertThat(String.join("\n", log.lines())).doesNotContain(ALICE_TOKEN).doesNotContain(BOB_TOKEN);
        }
    }

    @Test
    void anyOtherValueOfTheServersEnvironmentKeepsAnswersApart() throws Exception {
        Path file = dir.resolve("cache.db");
        Map<String, String> one = new HashMap<>(account("alice", ALICE_TOKEN));
        Map<String, String> other = new HashMap<>(one);
        other.put("LAB_REGION", "eu");
        Project first = project("project-a", acct(one), sqlite(file), Clock.systemUTC(), List.of());
        Project second = project("project-b", acct(other), sqlite(file), Clock.systemUTC(), List.of());

        first.call("acct__private_items");
        JsonNode fromSecond = second.call("acct__private_items");
        first.run(READ);
        ExecutionOutcome secondsRun = second.run(READ);

        assertThat(fromSecond.get("pid")).as("answered by the second project's own server").isNotNull();
        assertThat(fromSecond.get("served").intValue()).isEqualTo(1);
        assertThat(secondsRun.status()).isEqualTo(CacheStatus.MISS);
        assertThat(secondsRun.toolCalls()).extracting(ToolCallRecord::status).containsExactly(CacheStatus.HIT);
        assertThat(second.versions().versions().get("acct__private_items"))
                .isNotEqualTo(first.versions().versions().get("acct__private_items"));
    }

    @Test
    void identicalConfigurationsShareTheirAnswers() throws Exception {
        Path file = dir.resolve("cache.db");
        McpServerSettings same = acct(account("alice", ALICE_TOKEN));
        Project first = project("project-a", same, sqlite(file), Clock.systemUTC(), List.of());
        Project second = project("project-b", same, sqlite(file), Clock.systemUTC(), List.of());

        JsonNode fromFirst = first.call("acct__private_items");
        ExecutionOutcome firstRun = first.run(READ);
        JsonNode fromSecond = second.call("acct__private_items");
        ExecutionOutcome secondRun = second.run(READ);

        assertThat(fromSecond).as("the first project's answer, from the cache").isEqualTo(fromFirst);
        assertThat(secondRun.status()).isEqualTo(CacheStatus.HIT);
        assertThat(secondRun.result().value()).isEqualTo(firstRun.result().value());
    }

    @Test
    void aServerSharedPubliclySharesItsAnswersAcrossConfigurations() throws Exception {
        Path file = dir.resolve("cache.db");
        Project first = project("project-a", acct(account("alice", ALICE_TOKEN)).withSharePublic(true), sqlite(file),
                Clock.systemUTC(), List.of());
        Project second = project("project-b", acct(account("bob", BOB_TOKEN)).withSharePublic(true), sqlite(file),
                Clock.systemUTC(), List.of());

        first.call("acct__private_items");
        first.run(READ);
        JsonNode fromSecond = second.call("acct__private_items");
        ExecutionOutcome secondRun = second.run(READ);

        assertThat(fromSecond.get("account").textValue()).as("shared: public says anyone may have it").isEqualTo("alice");
        assertThat(secondRun.status()).isEqualTo(CacheStatus.HIT);
    }

    @Test
    void aRunIsKeptNoLongerThanTheToolAnswerItUsed() throws Exception {
        MutableClock clock = new MutableClock();
        MemoryCacheStore store = new MemoryCacheStore(100, clock);
        Project lab = project("project", acct(account("alice", ALICE_TOKEN)), store, clock,
                List.of(ToolCacheRule.cache("acct__private_items", Duration.ofSeconds(6), 100)));

        ExecutionOutcome first = lab.run(READ);
        assertThat(store.peek(first.key()).orElseThrow().expiresAt()).isEqualTo(clock.instant().plusSeconds(6));
        clock.advance(Duration.ofSeconds(4));
        ExecutionOutcome hitWithTwoSecondsLeft = lab.run(READ + " // again");
        assertThat(hitWithTwoSecondsLeft.toolCalls()).extracting(ToolCallRecord::status).containsExactly(CacheStatus.HIT);
        assertThat(store.peek(hitWithTwoSecondsLeft.key()).orElseThrow().expiresAt())
                .isEqualTo(clock.instant().plusSeconds(2));
        clock.advance(Duration.ofSeconds(3));

        ExecutionOutcome after = lab.run(READ);
        assertThat(after.status()).as("not the run TTL of 5 min: the answer it used is gone").isEqualTo(CacheStatus.MISS);
        assertThat(Answers.ofRun(after).get("served").intValue()).isEqualTo(2);
    }

    private HeldCatalog held(String tool) {
        McpToolCatalog real = new McpToolCatalog(List.of(acct(Map.of())), CALL_TIMEOUT, Duration.ofHours(1),
                line -> { }, Clock.systemUTC()).start();
        HeldCatalog held = new HeldCatalog(real, tool);
        catalogs.add(held);
        return held;
    }

    /** While {@code inFlight} waits inside the held call, a write to the same server starts and ends. */
    private static <T> T writeWhileHeld(HeldCatalog catalog, Project lab, Supplier<T> inFlight)
            throws Exception {
        CompletableFuture<T> reading = CompletableFuture.supplyAsync(inFlight);
        assertThat(catalog.answered.await(2, TimeUnit.MINUTES)).isTrue();
        assertThat(lab.call("acct__increment").get("counter").intValue()).isEqualTo(1);
        catalog.release.countDown();
        return reading.get(2, TimeUnit.MINUTES);
    }

    @Test
    void aReadInFlightWhenAWriteToItsServerStartedIsNotKept() throws Exception {
        HeldCatalog catalog = held("acct__get_count");
        Project lab = project("project", acct(Map.of()), catalog, new MemoryCacheStore(100, Clock.systemUTC()),
                Clock.systemUTC(), List.of());

        JsonNode raced = writeWhileHeld(catalog, lab, () -> lab.call("acct__get_count"));
        JsonNode next = lab.call("acct__get_count");

        assertThat(raced.get("counter").intValue()).isZero();
        assertThat(next.get("counter").intValue()).as("the server asked again, not the raced read").isEqualTo(1);
        assertThat(lab.call("acct__get_count")).isEqualTo(next);
    }

    @Test
    void aRunWhoseReadWasInFlightWhenAWriteStartedIsNotKept() throws Exception {
        HeldCatalog catalog = held("acct__get_count");
        Project lab = project("project", acct(Map.of()), catalog, new MemoryCacheStore(100, Clock.systemUTC()),
                Clock.systemUTC(), List.of());
        String code = "return await tools.acct.get_count({})";

        ExecutionOutcome raced = writeWhileHeld(catalog, lab, () -> lab.run(code));
        ExecutionOutcome next = lab.run(code);

        assertThat(Answers.ofRun(raced).get("counter").intValue()).isZero();
        assertThat(raced.notStoredBecause()).contains("was not stored").contains("started or ended while it was asked");
        assertThat(next.status()).isEqualTo(CacheStatus.MISS);
        assertThat(Answers.ofRun(next).get("counter").intValue()).isEqualTo(1);
        assertThat(lab.run(code).status()).isEqualTo(CacheStatus.HIT);
    }

    @Test
    void aRunThatReadAServerBeforeAWriteToItIsNotKeptEvenWhenTheReadWasStoredFirst() throws Exception {
        HeldCatalog catalog = held("acct__get_other");
        Project lab = project("project", acct(Map.of()), catalog, new MemoryCacheStore(100, Clock.systemUTC()),
                Clock.systemUTC(), List.of());
        String code = "const read = await tools.acct.get_count({}); await tools.acct.get_other({}); return read;";

        ExecutionOutcome raced = writeWhileHeld(catalog, lab, () -> lab.run(code));
        ExecutionOutcome next = lab.run(code);

        assertThat(Answers.ofRun(raced).get("counter").intValue()).isZero();
        assertThat(next.status()).isEqualTo(CacheStatus.MISS);
        assertThat(Answers.ofRun(next).get("counter").intValue()).isEqualTo(1);
    }
}
