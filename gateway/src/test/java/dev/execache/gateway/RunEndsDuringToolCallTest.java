package dev.execache.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.core.StoreGuard;
import dev.execache.core.CachePolicy;
import dev.execache.core.CachedExecutor;
import dev.execache.core.ErrorType;
import dev.execache.core.ExecutionOutcome;
import dev.execache.core.ExecutionRequest;
import dev.execache.core.Limits;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.ToolCallRecord;
import dev.execache.sandbox.DenoSandbox;
import dev.execache.sandbox.DenoSandboxSettings;
import dev.execache.store.memory.MemoryCacheStore;
import dev.execache.tools.mcp.McpServerSettings;
import dev.execache.tools.mcp.McpToolCatalog;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A run that ends while one of its tool calls is in flight: the call is cancelled on the
 * downstream server (the lab server records the notifications/cancelled it gets), the run is not
 * stored, and its outcome says what the cancelled call may have done. Real Deno, real servers.
 * The same through serve's stdio, and a client cancelling the run: adapters-mcp-server's
 * ExecuteCodeCallingToolsTest.
 */
class RunEndsDuringToolCallTest {
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(20);
    /** Long enough for the call to be made on a loaded machine; the call itself would take ten minutes. */
    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(5);
    private static final String SLOW_WRITE = "return await tools.lab.slow_write({ms: 600000});";
    private static DenoSandbox sandbox;

    @TempDir
    Path dir;

    private McpToolCatalog catalog;
    private MemoryCacheStore store;
    private CachedExecutor executor;
    private Gateway gateway;

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

    private void start(McpServerSettings lab) {
        MutableToolVersions versions = new MutableToolVersions();
        catalog = new McpToolCatalog(List.of(lab), CALL_TIMEOUT, Duration.ofHours(1), line -> { }, Clock.systemUTC())
                .start();
        store = new MemoryCacheStore(100, Clock.systemUTC());
        gateway = Gateway.builder(catalog, StoreGuard.of(store), versions,
                ServerEntry.policy(List.of(new ServerEntry(lab, true)), List.of()), CachePolicy.DEFAULTS).build();
        executor = CachedExecutor.builder(sandbox, store).toolVersions(versions).codeTools(gateway).build();
    }

    private ExecutionOutcome run(String code) {
        return executor.execute(new ExecutionRequest(code, Map.of(), Set.of(), Limits.DEFAULTS.withTimeout(RUN_TIMEOUT)));
    }

    /** What the lab server was told to cancel, once it was told (or after 15 s), and the writes it made. */
    private JsonNode cancellations() throws IOException {
        String result = catalog.call("lab__cancellations", Map.of("wait_ms", 15_000)).json();
        return Json.MAPPER.readTree(Json.MAPPER.readTree(result).at("/content/0/text").textValue());
    }

    @Test
    void aTimeoutDuringAWriteCancelsItOnTheServerAndSaysItMayHaveBeenApplied() throws IOException {
        start(Downstream.lab("lab", true));

        ExecutionOutcome outcome = run(SLOW_WRITE);

        assertThat(outcome.result().error().type()).isEqualTo(ErrorType.TIMEOUT_ERROR);
        assertThat(outcome.toolCalls()).extracting(ToolCallRecord::tool, ToolCallRecord::cancelled)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("lab__slow_write",
                        ToolCallRecord.Cancelled.POSSIBLY_APPLIED));
        assertThat(executor.policy().inspect(outcome.key())).isEmpty();
        JsonNode server = cancellations();
        assertThat(server.at("/cancelled/0/tool").textValue()).isEqualTo("slow_write");
        assertThat(server.at("/cancelled/0/reason").textValue()).isEqualTo("the run that made the call ended");
        assertThat(server.get("writes").intValue()).isZero();
    }

    @Test
    void aWriteWaitingForARestartingServerIsCancelledBeforeItIsSentAndSaysItWasNotApplied() {
        start(Downstream.lab("lab", true, Map.of("LAB_HOLD_RESTART", dir.resolve("held").toString())));

        ExecutionOutcome outcome = run("""
                try { await tools.lab.crash({}); } catch { /* the server died; it is being restarted */ }
                return await tools.lab.increment({});
                """);

        assertThat(outcome.result().error().type()).isEqualTo(ErrorType.TIMEOUT_ERROR);
        assertThat(outcome.toolCalls()).extracting(ToolCallRecord::tool, ToolCallRecord::cancelled)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("lab__crash", null),
                        org.assertj.core.groups.Tuple.tuple("lab__increment", ToolCallRecord.Cancelled.NOT_APPLIED));
        assertThat(executor.policy().inspect(outcome.key())).isEmpty();
    }
}
