package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.cli.output.Output;
import dev.execache.cli.settings.ConfigFile;
import dev.execache.core.CachePolicy;
import dev.execache.core.CachedExecutor;
import dev.execache.core.MutableToolVersions;
import dev.execache.gateway.Json;
import dev.execache.gateway.TestDeno;
import dev.execache.mcp.server.stdio.McpStdioServer;
import dev.execache.gateway.ServeTools;
import dev.execache.sandbox.DenoSandbox;
import dev.execache.sandbox.DenoSandboxSettings;
import dev.execache.store.memory.MemoryCacheStore;
import dev.execache.mcp.server.RawMcpClient;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.channels.Channels;
import java.nio.channels.Pipe;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Code that starts a Worker, whose Date.now and Math.random the runner cannot watch: the run says
 * it used a Worker, a hit of it says so too, and with cache_nondeterministic: false it is not
 * stored. Through {@code execache run} and {@code serve}, with a real Deno.
 */
class CodeOutsideTheMainRealmTest {
    private static final String WORKER = """
            const source = "self.postMessage([Date.now(), Math.random()]);";
            const worker = new Worker("data:text/javascript," + encodeURIComponent(source), {type: "module"});
            const values = await new Promise((resolve) => { worker.onmessage = (e) => resolve(e.data); });
            worker.terminate();
            return values;
            """;

    @TempDir
    Path dir;

    private JsonNode run(String... args) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = Main.run(args, Map.of("XDG_CACHE_HOME", dir.resolve("cache").toString(),
                        "EXECACHE_DENO", TestDeno.executable().toString(), "EXECACHE_NO_DAEMON", "1"), dir,
                new ByteArrayInputStream(new byte[0]), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(exit).as(err.toString(StandardCharsets.UTF_8)).isZero();
        return Json.MAPPER.readTree(out.toString(StandardCharsets.UTF_8));
    }

    @Test
    void runSaysTheCodeUsedAWorkerAlsoOnAHitAndStoresNothingWhenAskedNotTo() throws IOException {
        Files.writeString(dir.resolve("worker.ts"), WORKER);

        JsonNode first = run("run", "--json", "worker.ts");
        JsonNode hit = run("run", "--json", "worker.ts");
        Files.writeString(dir.resolve(ConfigFile.DEFAULT_NAME), "code_execution:\n  cache:\n    cache_nondeterministic: false\n");
        Files.writeString(dir.resolve("other.ts"), WORKER + "// another run\n");
        JsonNode notStored = run("run", "--json", "other.ts");
        JsonNode again = run("run", "--json", "other.ts");

        assertThat(first.get("nondeterminism").toString()).isEqualTo("[\"Worker\"]");
        assertThat(first.get("result").size()).isEqualTo(2);
        assertThat(hit.get("cache").textValue()).isEqualTo("hit");
        assertThat(hit.get("nondeterminism").toString()).isEqualTo("[\"Worker\"]");
        assertThat(notStored.get("notStored").textValue()).contains("Worker").contains("cache_nondeterministic is false");
        assertThat(again.get("cache").textValue()).isEqualTo("miss");
        assertThat(again.get("result")).isNotEqualTo(notStored.get("result"));
    }

    @Test
    void serveSaysTheCodeUsedAWorkerAndDoesNotStoreItWithCacheNondeterministicFalse() throws IOException {
        ServeFixture fixture = new ServeFixture(dir, Map.of());
        MemoryCacheStore store = new MemoryCacheStore(100, Clock.systemUTC());
        try (DenoSandbox sandbox = new DenoSandbox(DenoSandboxSettings.builder().denoExecutable(TestDeno.executable())
                .warmPoolSize(0).build())) {
            CachedExecutor executor = CachedExecutor.builder(sandbox, store).toolVersions(new MutableToolVersions()).cachePolicy(CachePolicy.DEFAULTS.withCacheNondeterministic(false)).build();
            Pipe toServer = Pipe.open();
            Pipe fromServer = Pipe.open();
            McpStdioServer server = new McpStdioServer(ServeTools.builder(executor, fixture.serveSettings).build(),
                    "test",
                    Channels.newInputStream(toServer.source()), Channels.newOutputStream(fromServer.sink()),
                    Duration.ofSeconds(5));
            try {
                RawMcpClient client = new RawMcpClient(Channels.newOutputStream(toServer.sink()),
                        Channels.newInputStream(fromServer.source()));
                client.initialize();

                JsonNode first = client.callTool("execute_code", Map.of("code", WORKER)).get("structuredContent");
                JsonNode second = client.callTool("execute_code", Map.of("code", WORKER)).get("structuredContent");

                assertThat(first.get("nondeterminism").toString()).isEqualTo("[\"Worker\"]");
                assertThat(first.get("notStored").textValue()).contains("Worker");
                assertThat(second.get("hit").booleanValue()).isFalse();
                assertThat(second.get("nondeterminism").toString()).isEqualTo("[\"Worker\"]");
                assertThat(store.size()).isZero();
            } finally {
                server.close();
            }
        }
    }
}
