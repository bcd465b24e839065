package dev.execache.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.core.StoreGuard;
import dev.execache.core.CachePolicy;
import dev.execache.core.CacheStats;
import dev.execache.core.CacheStatus;
import dev.execache.core.CachedExecutor;
import dev.execache.core.ErrorType;
import dev.execache.core.ExecutionOutcome;
import dev.execache.core.ExecutionRequest;
import dev.execache.core.KeptOut;
import dev.execache.core.Limits;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.ToolCallRecord;
import dev.execache.sandbox.DenoSandbox;
import dev.execache.sandbox.DenoSandboxSettings;
import dev.execache.store.memory.MemoryCacheStore;
import dev.execache.tools.mcp.McpToolCatalog;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Code that calls tools, end to end in one process: a real Deno sandbox, the policy over a real
 * store, and the real downstream servers (the memory and filesystem reference servers and the
 * tests' lab server) behind the same {@link Gateway} serve uses. The progress of code's tool calls
 * reaching the agent through serve's stdio: adapters-mcp-server's ExecuteCodeCallingToolsTest.
 */
class CodeToolsTest {
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(20);
    private static DenoSandbox sandbox;

    @TempDir
    Path dir;

    private McpToolCatalog catalog;
    private final MutableToolVersions versions = new MutableToolVersions();
    private MemoryCacheStore store;
    private Gateway gateway;
    private CachedExecutor executor;

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
    void stopServers() {
        if (catalog != null) {
            catalog.close();
        }
    }

    private void start(List<ServerEntry> servers, CachePolicy policy) {
        catalog = new McpToolCatalog(ServerEntry.settings(servers), CALL_TIMEOUT,
                Duration.ofHours(1), line -> { }, Clock.systemUTC()).start();
        store = new MemoryCacheStore(100, Clock.systemUTC());
        gateway = Gateway.builder(catalog, StoreGuard.of(store), versions, ServerEntry.policy(servers, List.of()),
                policy).build();
        executor = CachedExecutor.builder(sandbox, store).toolVersions(versions).cachePolicy(policy).codeTools(gateway)
                .build();
    }

    private Path referenceServers() throws IOException {
        Path root = Files.createDirectories(dir.resolve("files")).toRealPath();
        Files.writeString(root.resolve("note.txt"), "first");
        start(List.of(new ServerEntry(Downstream.memory(dir), true),
                new ServerEntry(Downstream.filesystem(root), true)), CachePolicy.DEFAULTS);
        return root;
    }

    private void lab() {
        start(List.of(new ServerEntry(Downstream.lab("lab", true), true)), CachePolicy.DEFAULTS);
    }

    /** The lab with invalidate_on_write: none, so changing a tool's description drops nothing by itself. */
    private void labKeepingReadsOnWrite() {
        start(List.of(new ServerEntry(Downstream.lab("lab", true), false)), CachePolicy.DEFAULTS);
    }

    private ExecutionOutcome run(String code, Object context) {
        return executor.execute(new ExecutionRequest(code, context, Set.of(), Limits.DEFAULTS));
    }


    private static List<String> tools(ExecutionOutcome outcome) {
        return outcome.toolCalls().stream().map(ToolCallRecord::tool).toList();
    }

    @Test
    void codeThatReadsThroughFsAndMemoryIsCachedAndItsEntryNamesTheToolsItCalled() throws IOException {
        Path root = referenceServers();
        String code = """
                const note = await tools.fs.read_text_file({path: context.path});
                const graph = await tools.memory.read_graph({});
                return {note: typeof note === "string" ? note : note.content, entities: graph.entities.length};
                """;
        Map<String, Object> context = Map.of("path", root.resolve("note.txt").toString());

        ExecutionOutcome first = run(code, context);
        ExecutionOutcome second = run(code, context);

        assertThat(Answers.ofRun(first).get("note").asText()).isEqualTo("first");
        assertThat(Answers.ofRun(first).get("entities").intValue()).isZero();
        assertThat(first.status()).isEqualTo(CacheStatus.MISS);
        assertThat(first.notStoredBecause()).isNull();
        assertThat(tools(first)).containsExactly("fs__read_text_file", "memory__read_graph");
        assertThat(first.toolCalls()).extracting(ToolCallRecord::status).containsOnly(CacheStatus.MISS);
        assertThat(executor.policy().inspect(first.key()).orElseThrow().toolVersions())
                .containsEntry("fs__read_text_file", versions.versions().get("fs__read_text_file"))
                .containsEntry("memory__read_graph", versions.versions().get("memory__read_graph"))
                .doesNotContainKeys("memory__create_entities", "fs__write_file", "fs__list_directory");
        assertThat(second.status()).isEqualTo(CacheStatus.HIT);
        assertThat(second.result().value()).isEqualTo(first.result().value());
        assertThat(second.toolCalls()).isEmpty();
    }

    @Test
    void aRunKeepsOutOfTheAgentExactlyTheAnswersItConsumedLessItsResultAndItsHitCountsThemAgain() throws IOException {
        lab();
        // get_count answers {"counter":0,"served":N,"who":WHO}: 33 bytes and WHO
        String code = """
                const a = await tools.lab.get_count({who: context.who});
                const b = await tools.lab.get_count({who: context.who + "y"});
                return a.who.length + b.who.length;
                """;
        ExecutionRequest request = new ExecutionRequest(code, Map.of("who", "x".repeat(1000)), Set.of(), Limits.DEFAULTS)
                .withAgent("claude-code");

        ExecutionOutcome ran = executor.execute(request);
        ExecutionOutcome hit = executor.execute(request);

        assertThat(ran.result().value()).isEqualTo("2001");
        assertThat(ran.keptOut()).isEqualTo(new KeptOut(1033 + 1034, 4, Map.of("lab__get_count", 2067L)));
        assertThat(ran.keptOut().bytes()).isEqualTo(2063);
        assertThat(ran.keptOut().estimatedTokens()).isEqualTo(515);
        ObjectNode details = Json.MAPPER.createObjectNode();
        Json.runDetails(details, ran);
        assertThat(details.at("/contextKeptOut/bytes").longValue()).isEqualTo(2063);
        assertThat(details.at("/contextKeptOut/toolAnswerBytesByTool/lab__get_count").longValue()).isEqualTo(2067);
        assertThat(hit.status()).isEqualTo(CacheStatus.HIT);
        assertThat(hit.keptOut()).isEqualTo(new KeptOut(2067, 4, Map.of()));
        CacheStats stats = executor.policy().stats();
        assertThat(stats.keptOutBytes()).isEqualTo(2 * 2063);
        assertThat(stats.toolAnswerBytes()).isEqualTo(2067);
        assertThat(stats.tools().get("lab__get_count").toolAnswerBytes()).isEqualTo(2067);
        // the run's miss and its two tool calls, then the run's hit
        assertThat(stats.agents()).containsOnlyKeys("claude-code");
        assertThat(stats.agents().get("claude-code").misses()).isEqualTo(3);
        assertThat(stats.agents().get("claude-code").hits()).isEqualTo(1);
        assertThat(stats.agents().get("claude-code").keptOutBytes()).isEqualTo(2 * 2063);
    }

    @Test
    void anArgumentOverTheBridgesBoundIsAnErrorTheCodeCatchesAndTheRunGoesOn() throws IOException {
        lab();

        ExecutionOutcome outcome = run("""
                let caught;
                try { await tools.lab.get_count({who: "z".repeat(20 * 1024 * 1024)}); } catch (e) { caught = String(e); }
                return {caught, after: await tools.lab.get_count({who: "small"})};
                """, null);

        assertThat(Answers.ofRun(outcome).get("caught").textValue()).isEqualTo("RangeError: tools.lab.get_count: the call is"
                + " 20971549 bytes (its arguments as JSON), over the limit of 10485760 bytes that one tool call may"
                + " have; send less (a part, or a reference to the data)");
        assertThat(Answers.ofRun(outcome).at("/after/who").textValue()).isEqualTo("small");
        assertThat(tools(outcome)).containsExactly("lab__get_count");
    }

    @Test
    void aReadAlreadyInTheToolCacheIsAHitInsideTheRun() throws IOException {
        lab();
        gateway.call("lab__get_other", Map.of());

        ExecutionOutcome outcome = run("return await tools.lab.get_other({})", null);

        assertThat(Answers.ofRun(outcome).get("served").intValue()).isEqualTo(1);
        assertThat(outcome.toolCalls()).extracting(ToolCallRecord::status).containsExactly(CacheStatus.HIT);
    }

    @Test
    void codeThatCallsAMutatingToolRunsEveryTimeAndSaysWhy() throws IOException {
        lab();
        String code = "const r = await tools.lab.increment({}); return r.counter;";

        ExecutionOutcome first = run(code, null);
        ExecutionOutcome second = run(code, null);

        assertThat(first.result().value()).isEqualTo("1");
        assertThat(second.result().value()).isEqualTo("2");
        assertThat(second.status()).isEqualTo(CacheStatus.MISS);
        assertThat(first.notStoredBecause()).contains("lab__increment").contains("not cached");
        assertThat(first.toolCalls()).extracting(ToolCallRecord::status).containsExactly(CacheStatus.BYPASS);
        assertThat(store.size()).isZero();
    }

    @Test
    void aToolErrorRejectsWithTheToolsMessageAndTheRunIsNotStored() throws IOException {
        lab();
        String code = "try { await tools.lab.fail({}); return 'no'; } catch (e) { return e.message; }";

        ExecutionOutcome first = run(code, null);
        ExecutionOutcome second = run(code, null);

        assertThat(Answers.ofRun(first).asText()).isEqualTo("{\"served\":1}");
        assertThat(Answers.ofRun(second).asText()).isEqualTo("{\"served\":2}");
        assertThat(first.notStoredBecause()).contains("lab__fail failed");
    }

    @Test
    void aSchemaChangeInvalidatesExactlyTheRunsThatCalledThatTool() throws Exception {
        labKeepingReadsOnWrite();
        String readsCount = "return (await tools.lab.get_count({who: 'a'})).served";
        String readsOther = "return (await tools.lab.get_other({})).served";
        run(readsCount, null);
        run(readsOther, null);
        String before = versions.versions().get("lab__get_count");

        gateway.call("lab__set_description", Map.of("tool", "get_count", "description", "v2", "notify", true));
        Downstream.await("the new digest of lab__get_count", CALL_TIMEOUT,
                () -> !before.equals(versions.versions().get("lab__get_count")));

        ExecutionOutcome count = run(readsCount, null);
        ExecutionOutcome other = run(readsOther, null);
        assertThat(count.status()).isEqualTo(CacheStatus.MISS);
        assertThat(count.result().value()).isEqualTo("2");
        assertThat(other.status()).isEqualTo(CacheStatus.HIT);
        assertThat(other.result().value()).isEqualTo("1");
    }

    @Test
    void aWriteThroughExecacheMakesACachedRunThatReadTheSameServerRunAgain() throws IOException {
        Path root = referenceServers();
        String readsMemory = "return (await tools.memory.read_graph({})).entities.map((e) => e.name)";
        String readsFs = "return await tools.fs.list_allowed_directories({})";
        ExecutionOutcome empty = run(readsMemory, null);
        run(readsFs, null);

        gateway.call("memory__create_entities", Map.of("entities", List.of(
                Map.of("name", "execache", "entityType", "tool", "observations", List.of("caches")))));

        ExecutionOutcome after = run(readsMemory, null);
        assertThat(empty.result().value()).isEqualTo("[]");
        assertThat(after.status()).isEqualTo(CacheStatus.MISS);
        assertThat(after.result().value()).isEqualTo("[\"execache\"]");
        assertThat(run(readsFs, null).status()).isEqualTo(CacheStatus.HIT);
        assertThat(root).exists();
    }

    @Test
    void aWriteFromCodeRunsAgainEveryTimeAndItsSideEffectIsVisibleTwice() throws IOException {
        referenceServers();
        String code = """
                await tools.memory.add_observations({observations: [{entityName: "e", contents: [crypto.randomUUID()]}]});
                return (await tools.memory.read_graph({})).entities.length;
                """;
        gateway.call("memory__create_entities", Map.of("entities", List.of(
                Map.of("name", "e", "entityType", "t", "observations", List.of()))));

        ExecutionOutcome first = run(code, null);
        ExecutionOutcome second = run(code, null);

        JsonNode graph = Json.MAPPER.readTree(Gateway.answerOf(gateway.call("memory__read_graph", Map.of()))
                .json());
        assertThat(graph.at("/entities/0/observations")).hasSize(2);
        assertThat(second.status()).isEqualTo(CacheStatus.MISS);
        assertThat(first.notStoredBecause()).contains("memory__add_observations");
    }

    @Test
    void theCallCapEndsTheCodesCallsAndTheRunIsNotStored() throws IOException {
        lab();
        ExecutionOutcome outcome = executor.execute(new ExecutionRequest("""
                let made = 0;
                try { for (;;) { await tools.lab.get_other({}); made++; } }
                catch (e) { return [made, e.message]; }
                """, null, Set.of(), Limits.DEFAULTS.withMaxToolCalls(3)));

        assertThat(Answers.ofRun(outcome).get(0).intValue()).isEqualTo(3);
        assertThat(Answers.ofRun(outcome).get(1).asText()).contains("limit of 3");
        assertThat(outcome.notStoredBecause()).contains("limit of 3");
    }

    @Test
    void toolCallsCountAgainstTheRunsTimeout() {
        lab();
        ExecutionOutcome outcome = executor.execute(new ExecutionRequest(
                "for (;;) { await tools.lab.get_other({}); }", null, Set.of(),
                Limits.DEFAULTS.withTimeout(Duration.ofSeconds(2)).withMaxToolCalls(Integer.MAX_VALUE)));

        assertThat(outcome.result().error().type()).isEqualTo(ErrorType.TIMEOUT_ERROR);
        assertThat(outcome.toolCalls()).isNotEmpty();
    }

    @Test
    void onlyServersWithCodeAccessAreReachable() {
        start(List.of(new ServerEntry(Downstream.lab("lab", true), true, false)), CachePolicy.DEFAULTS);

        ExecutionOutcome outcome = run("return await tools.lab.get_other({})", null);

        assertThat(outcome.result().error().message()).contains("no server 'lab' can be called from code");
        assertThat(gateway.reachable()).isEmpty();
    }

    @Test
    void withCacheNondeterministicFalseARunThatUsedMathRandomIsNotStored() {
        start(List.of(new ServerEntry(Downstream.lab("lab", true), true)),
                CachePolicy.DEFAULTS.withCacheNondeterministic(false));

        ExecutionOutcome random = run("return Math.random() >= 0", null);
        ExecutionOutcome plain = run("return 1", null);

        assertThat(random.result().nondeterminism()).containsExactly("Math.random");
        assertThat(random.notStoredBecause()).contains("Math.random");
        assertThat(plain.result().nondeterminism()).isEmpty();
        assertThat(run("return 1", null).status()).isEqualTo(CacheStatus.HIT);
        assertThat(run("return Math.random() >= 0", null).status()).isEqualTo(CacheStatus.MISS);
    }

    @Test
    void describeToolsOutputCompilesWithDenoCheckAgainstAScriptThatUsesIt() throws Exception {
        referenceServers();
        Path declarations = dir.resolve("tools.d.ts");
        Files.writeString(declarations, gateway.typescript());
        Path script = dir.resolve("script.ts");
        Files.writeString(script, """
                /// <reference path="./tools.d.ts" />
                const graph = await tools.memory.read_graph({});
                const found = await tools.memory.search_nodes({ query: "x" });
                const text = await tools.fs.read_text_file({ path: "/x", head: 3 });
                export const all = [graph, found, text];
                """);
        Path wrong = dir.resolve("wrong.ts");
        Files.writeString(wrong, """
                /// <reference path="./tools.d.ts" />
                await tools.memory.search_nodes({ query: 5 });
                """);

        assertThat(gateway.typescript()).contains("declare const tools: {").contains("read_graph(");
        assertThat(denoCheck(script)).as("deno check of a script using the declarations").isEqualTo("");
        assertThat(denoCheck(wrong)).contains("TS2322");
    }

    /** Empty when deno check passes, else its output. */
    private String denoCheck(Path file) throws Exception {
        ProcessBuilder builder = new ProcessBuilder(TestDeno.executable().toString(), "check", "--quiet",
                file.toString()).directory(dir.toFile()).redirectErrorStream(true);
        builder.environment().put("DENO_DIR", dir.resolve("deno-dir").toString());
        builder.environment().put("NO_COLOR", "1");
        Process process = builder.start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(120, TimeUnit.SECONDS)).isTrue();
        return process.exitValue() == 0 ? "" : out;
    }
}
