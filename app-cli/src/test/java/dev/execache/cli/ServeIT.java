package dev.execache.cli;

import org.awaitility.Awaitility;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.cli.output.Output;
import dev.execache.gateway.Json;
import dev.execache.mcp.server.RawMcpClient;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.TextContent;
import io.modelcontextprotocol.spec.McpSchema.Tool;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code execache serve} as a separate process, with the MCP SDK's client (or raw lines) on its stdio. */
class ServeIT {
    @TempDir
    Path dir;

    static JsonNode structured(CallToolResult result) {
        return Json.MAPPER.valueToTree(result.structuredContent());
    }

    static String text(CallToolResult result) {
        return ((TextContent) result.content().get(0)).text();
    }

    /** A tool error's facts: JSON text, with no structured content (that is for results matching the schema). */
    static JsonNode errorFacts(CallToolResult result) {
        assertThat(result.structuredContent()).isNull();
        try {
            return Json.MAPPER.readTree(text(result));
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void itInitializesAndListsTheFourToolsWithSchemasAndTruthfulAnnotations() {
        try (ServeProcess server = ServeProcess.start("--store", "memory")) {
            Map<String, Tool> tools = server.client().listTools().block().tools().stream()
                    .collect(Collectors.toMap(Tool::name, Function.identity()));

            assertThat(server.client().getServerInfo().name()).isEqualTo("execache");
            assertThat(tools).containsOnlyKeys("execute_code", "cache_stats", "invalidate_tool", "clear_cache");
            assertThat(tools.get("execute_code").inputSchema()).containsEntry("required", List.of("code"));
            assertThat(tools.get("cache_stats").annotations().readOnlyHint()).isTrue();
            // destructive is MCP's default, which a hint left out means
            assertThat(tools.get("clear_cache").annotations().destructiveHint()).isNull();
            assertThat(tools.get("clear_cache").annotations().readOnlyHint()).isNull();
            assertThat(tools.get("invalidate_tool").annotations().destructiveHint()).isNull();
            assertThat(tools.get("invalidate_tool").annotations().idempotentHint()).isTrue();
            assertThat(tools.get("execute_code").annotations().openWorldHint()).isFalse();
        }
    }

    @Test
    void badArgumentsAreToolErrorsAndTheServerKeepsServing() {
        try (ServeProcess server = ServeProcess.start("--store", "memory", "--tool", "github=v1")) {
            CallToolResult notAnObject = server.call("execute_code", Map.of("code", "return 1", "context", "{}"));
            CallToolResult unknownTool = server.call("execute_code", Map.of("code", "return 1", "tools", List.of("jira")));
            CallToolResult tooLong = server.call("execute_code", Map.of("code", "return 1", "timeout", 3600));
            CallToolResult stats = server.call("cache_stats", Map.of());

            assertThat(notAnObject.isError()).isTrue();
            assertThat(text(notAnObject)).contains("context").contains("must be a JSON object");
            assertThat(unknownTool.isError()).isTrue();
            assertThat(text(unknownTool)).contains("unknown tool 'jira'").contains("github");
            assertThat(tooLong.isError()).isTrue();
            assertThat(text(tooLong)).contains("timeout");
            assertThat(stats.isError()).isFalse();
            assertThat(structured(stats).get("misses").longValue()).isZero();
        }
    }

    @Test
    void statsInvalidateAndClearAnswerOnAnEmptyCache() {
        try (ServeProcess server = ServeProcess.start("--store", "memory")) {
            assertThat(structured(server.call("cache_stats", Map.of())).get("store").textValue()).isEqualTo("memory");
            assertThat(structured(server.call("invalidate_tool", Map.of("tool", "github"))).get("removed").intValue()).isZero();
            assertThat(structured(server.call("clear_cache", Map.of("pattern", "v1:*"))).get("removed").intValue()).isZero();
        }
    }

    @Test
    void executeIsAMissThenAHitWithTheValueTimesAndConsole() {
        try (ServeProcess server = ServeProcess.start("--store", "memory")) {
            Map<String, Object> ab = new LinkedHashMap<>();
            ab.put("a", 1);
            ab.put("b", 2);
            Map<String, Object> ba = new LinkedHashMap<>();
            ba.put("b", 2);
            ba.put("a", 1);
            String code = "console.log('adding'); return { sum: context.a + context.b };";

            CallToolResult miss = server.call("execute_code", Map.of("code", code, "context", ab));
            CallToolResult hit = server.call("execute_code", Map.of("code", code, "context", ba));

            assertThat(miss.isError()).isFalse();
            assertThat(structured(miss).at("/result/sum").intValue()).isEqualTo(3);
            assertThat(structured(miss).get("cache").textValue()).isEqualTo("miss");
            assertThat(structured(miss).get("hit").booleanValue()).isFalse();
            assertThat(structured(miss).get("console").textValue()).isEqualTo("adding\n");
            assertThat(structured(miss).get("executionTimeMs").doubleValue()).isPositive();
            assertThat(structured(hit).get("cache").textValue()).isEqualTo("hit");
            assertThat(structured(hit).get("hit").booleanValue()).isTrue();
            assertThat(structured(hit).at("/result/sum").intValue()).isEqualTo(3);
            assertThat(structured(hit).get("console").textValue()).isEqualTo("adding\n");
            assertThat(structured(hit).get("savedMs").doubleValue()).isPositive();
            assertThat(text(hit)).contains("\"sum\":3");
        }
    }

    @Test
    void aFailedRunIsAToolErrorWithTheTypedErrorAndIsNotCached() {
        try (ServeProcess server = ServeProcess.start("--store", "memory")) {
            String code = "const x = 1;\nthrow new Error('boom');";

            CallToolResult first = server.call("execute_code", Map.of("code", code));
            CallToolResult second = server.call("execute_code", Map.of("code", code));
            CallToolResult syntax = server.call("execute_code", Map.of("code", "return 1 +"));
            CallToolResult timeout = server.call("execute_code", Map.of("code", "while (true) {}", "timeout", 1));

            assertThat(first.isError()).isTrue();
            JsonNode error = errorFacts(first).get("error");
            assertThat(error.get("type").textValue()).isEqualTo("RuntimeError");
            assertThat(error.get("message").textValue()).contains("boom");
            assertThat(error.get("stack").textValue()).contains("boom");
            assertThat(error.get("line").intValue()).isEqualTo(2);
            assertThat(error.get("column").intValue()).isPositive();
            assertThat(errorFacts(second).get("cache").textValue()).isEqualTo("miss");
            assertThat(errorFacts(syntax).at("/error/type").textValue()).isEqualTo("SyntaxError");
            assertThat(errorFacts(timeout).at("/error/type").textValue()).isEqualTo("TimeoutError");
            assertThat(structured(server.call("cache_stats", Map.of())).get("entries").intValue()).isZero();
        }
    }

    @Test
    void statsInvalidateAndClearCountWhatHappened() {
        try (ServeProcess server = ServeProcess.start("--store", "memory", "--tool", "github=v1", "--tool", "jira=j1")) {
            server.call("execute_code", Map.of("code", "return 1", "tools", List.of("github")));
            server.call("execute_code", Map.of("code", "return 1", "tools", List.of("github")));
            server.call("execute_code", Map.of("code", "return 2", "tools", List.of("jira")));
            server.call("execute_code", Map.of("code", "return 3", "tools", List.of("jira")));

            JsonNode stats = structured(server.call("cache_stats", Map.of()));
            JsonNode invalidated = structured(server.call("invalidate_tool", Map.of("tool", "github")));
            JsonNode cleared = structured(server.call("clear_cache", Map.of()));

            assertThat(stats.get("hits").longValue()).isEqualTo(1);
            assertThat(stats.get("misses").longValue()).isEqualTo(3);
            assertThat(stats.get("entries").longValue()).isEqualTo(3);
            assertThat(invalidated.get("removed").intValue()).isEqualTo(1);
            assertThat(cleared.get("removed").intValue()).isEqualTo(2);
            // both were asked by hand: the tool's one result, then the two entries cleared
            JsonNode after = structured(server.call("cache_stats", Map.of()));
            assertThat(after.get("invalidations").longValue()).isEqualTo(3);
            assertThat(after.at("/removalsByCause/hand").longValue()).isEqualTo(3);
        }
    }

    @Test
    void aChangeToToolsInTheConfigFileInvalidatesThatToolsResultsWithoutARestart() throws Exception {
        Path config = dir.resolve("execache.yaml");
        Files.writeString(config, "tools:\n  github: v1\n  jira: j1\n");
        try (ServeProcess server = ServeProcess.start("--store", "memory", "--config", config.toString())) {
            server.call("execute_code", Map.of("code", "return 'gh'", "tools", List.of("github")));
            server.call("execute_code", Map.of("code", "return 'jira'", "tools", List.of("jira")));

            Files.writeString(config, "tools:\n  github: v2\n  jira: j1\n");

            assertThat(server.awaitStderr(line -> line.contains("tool github changed"), Duration.ofSeconds(10)))
                    .isEqualTo("execache: tool github changed (v1 -> v2): removed 1 entry");
            assertThat(structured(server.call("execute_code", Map.of("code", "return 'gh'", "tools", List.of("github"))))
                    .get("cache").textValue()).isEqualTo("miss");
            assertThat(structured(server.call("execute_code", Map.of("code", "return 'jira'", "tools", List.of("jira"))))
                    .get("cache").textValue()).isEqualTo("hit");
        }
    }

    @Test
    void aResultStoredBeforeARestartIsAHitAfterItOnTheSqliteStore() {
        String db = dir.resolve("cache.db").toString();
        try (ServeProcess first = ServeProcess.start("--store", "sqlite", "--db", db)) {
            assertThat(structured(first.call("execute_code", Map.of("code", "return 'kept'"))).get("cache").textValue())
                    .isEqualTo("miss");
        }
        try (ServeProcess second = ServeProcess.start("--store", "sqlite", "--db", db)) {
            assertThat(structured(second.call("execute_code", Map.of("code", "return 'kept'"))).get("cache").textValue())
                    .isEqualTo("hit");
        }
    }

    @Test
    void stdoutCarriesOnlyTheProtocolAndAMalformedLineGetsAnErrorThenTheEndOfInputEndsItWithNoRunnerLeft()
            throws Exception {
        Process process = new ProcessBuilder(commandLine("--store", "memory")).start();
        StringBuilder stderr = new StringBuilder();
        Thread errors = drain(process, stderr);
        List<ProcessHandle> runners;
        try (RawMcpClient client = new RawMcpClient(process.getOutputStream(), process.getInputStream())) {
            client.initialize();
            client.send("this is not JSON");
            JsonNode parseError = client.response(null);
            JsonNode printed = client.callTool("execute_code",
                    Map.of("code", "console.log('{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{}}'); return 1"));
            runners = process.descendants().toList();

            assertThat(parseError.at("/error/code").intValue()).isEqualTo(-32700);
            assertThat(printed.at("/structuredContent/console").textValue()).contains("\"id\":99");
            assertThat(client.unclaimed()).isEmpty();
        }
        assertThat(process.waitFor(20, TimeUnit.SECONDS)).isTrue();
        errors.join();
        assertThat(process.exitValue()).isZero();
        assertThat(stderr).contains("serving MCP on stdio");
        assertThat(runners).isNotEmpty();
        assertNoneAlive(runners);
    }

    @Test
    void sigtermEndsItWithNoRunnerLeft() throws Exception {
        Process process = new ProcessBuilder(commandLine("--store", "memory")).start();
        drain(process, new StringBuilder());
        try (RawMcpClient client = new RawMcpClient(process.getOutputStream(), process.getInputStream())) {
            client.initialize();
            client.callTool("execute_code", Map.of("code", "return 1"));
            List<ProcessHandle> runners = process.descendants().toList();

            process.destroy();

            assertThat(process.waitFor(20, TimeUnit.SECONDS)).isTrue();
            assertThat(process.exitValue()).isEqualTo(143);
            assertThat(runners).isNotEmpty();
            assertNoneAlive(runners);
        }
    }

    @Test
    void sigkillOfTheServerLeavesNoRunnerEvenOneRunningALoop() throws Exception {
        ServeProcess server = ServeProcess.start("--store", "memory");
        Thread looping = new Thread(() -> {
            try {
                server.call("execute_code", Map.of("code", "while (true) {}", "timeout", 25));
            } catch (RuntimeException e) {
                // the server is killed under it
            }
        });
        looping.setDaemon(true);
        looping.start();
        ProcessHandle serve = server.process();
        ServeWithTypeScriptClientIT.awaitCondition(() -> serve.descendants()
                .anyMatch(process -> process.info().totalCpuDuration().map(cpu -> cpu.toMillis() > 500).orElse(false)));
        List<ProcessHandle> runners = serve.descendants().toList();

        serve.destroyForcibly();

        assertThat(runners).isNotEmpty();
        assertNoneAlive(runners);
        try {
            server.close();
        } catch (RuntimeException e) {
            // the client notices that its server is gone
        }
    }

    @Test
    void sigtermAnswersACallInFlightThatTheServerIsShuttingDown() throws Exception {
        ProcessBuilder builder = new ProcessBuilder(commandLine("--store", "memory"));
        builder.environment().put("EXECACHE_WARM_POOL", "0");
        Process process = builder.start();
        StringBuilder stderr = new StringBuilder();
        drain(process, stderr);
        try (RawMcpClient client = new RawMcpClient(process.getOutputStream(), process.getInputStream())) {
            client.initialize();
            int id = client.sendRequest("tools/call", Map.of("name", "execute_code",
                    "arguments", Map.of("code", "while (true) {}", "timeout", 25)));
            ServeWithTypeScriptClientIT.awaitCondition(() -> !ServeWithTypeScriptClientIT.denoUnder(process.toHandle()).isEmpty());
            List<ProcessHandle> runners = ServeWithTypeScriptClientIT.denoUnder(process.toHandle());

            // SIGTERM through the handle: Process.destroy() would also close the pipes we read the answer from
            process.toHandle().destroy();

            JsonNode answer;
            try {
                answer = client.response(id);
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + "; unclaimed " + client.unclaimed() + "; stderr:\n" + stderr, e);
            }
            assertThat(answer.at("/result/isError").booleanValue()).isTrue();
            String text = answer.at("/result/content/0/text").textValue();
            assertThat(Json.MAPPER.readTree(text).at("/error/message").textValue()).contains("shutting down");
            assertThat(text).doesNotContain("exit code").doesNotContain("RuntimeError");
            assertThat(process.waitFor(20, TimeUnit.SECONDS)).isTrue();
            assertThat(process.exitValue()).isEqualTo(143);
            assertNoneAlive(runners);
        }
    }

    @Test
    void protocolDetailsAreAnsweredAtOnceWithTheRightErrors() throws Exception {
        Process process = new ProcessBuilder(commandLine("--store", "memory")).start();
        StringBuilder stderr = new StringBuilder();
        Thread errors = drain(process, stderr);
        try (RawMcpClient client = new RawMcpClient(process.getOutputStream(), process.getInputStream())) {
            JsonNode earlyPing = client.request("ping", null);
            JsonNode earlyList = client.request("tools/list", Map.of());
            JsonNode discover = client.request("server/discover", Map.of());
            JsonNode init = client.request("initialize", Map.of("protocolVersion", "2025-03-26",
                    "capabilities", Map.of(), "clientInfo", Map.of("name", "raw", "version", "1")));
            client.send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
            client.send("[{\"jsonrpc\":\"2.0\",\"id\":\"b1\",\"method\":\"ping\"},"
                    + "{\"jsonrpc\":\"2.0\",\"id\":\"b2\",\"method\":\"tools/list\",\"params\":{}}]");
            JsonNode batch = client.batchResponse();
            JsonNode badArguments = client.request("tools/call", Map.of("name", "execute_code", "arguments", "return 1"));
            JsonNode badName = client.request("tools/call", Map.of("arguments", Map.of()));
            JsonNode badLevel = client.request("logging/setLevel", Map.of("level", "loud"));

            assertThat(earlyPing.get("result").isObject()).isTrue();
            assertThat(earlyList.at("/error/code").intValue()).isEqualTo(-32600);
            assertThat(earlyList.at("/error/message").textValue()).contains("not initialized");
            // the 2026-07-28 era's discovery is answered at any time, with no session
            assertThat(discover.at("/result/supportedVersions/0").textValue()).isEqualTo("2026-07-28");
            assertThat(init.at("/result/protocolVersion").textValue()).isEqualTo("2025-03-26");
            assertThat(batch.isArray()).as(batch.toString()).isTrue();
            assertThat(batch).hasSize(2);
            assertThat(badArguments.at("/error/code").intValue()).isEqualTo(-32602);
            assertThat(badArguments.at("/error/message").textValue()).contains("params.arguments");
            assertThat(badName.at("/error/message").textValue()).contains("params.name");
            assertThat(badLevel.at("/error/code").intValue()).isEqualTo(-32602);
        }
        assertThat(process.waitFor(20, TimeUnit.SECONDS)).isTrue();
        errors.join();
        assertThat(stderr.toString().lines().filter(line -> line.contains("params.arguments"))).hasSize(1);
        assertThat(stderr).doesNotContain("Exception").doesNotContain("\tat ");
        assertThat(stderr.toString().lines().findFirst().orElse("")).contains("config file");
    }

    private static void assertNoneAlive(List<ProcessHandle> processes) {
        Awaitility.await("every process ended").atMost(Duration.ofSeconds(60)).pollInSameThread()
                .pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(50))
                .untilAsserted(() -> assertThat(processes).noneMatch(ProcessHandle::isAlive));
    }

    static List<String> commandLine(String... arguments) {
        List<String> command = new ArrayList<>();
        command.add(ServeProcess.java());
        command.addAll(ServeProcess.command(UUID.randomUUID().toString(), List.of(arguments)));
        return command;
    }

    static Thread drain(Process process, StringBuilder into) {
        Thread thread = new Thread(() -> {
            try (BufferedReader lines = new BufferedReader(
                    new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = lines.readLine()) != null) {
                    synchronized (into) {
                        into.append(line).append('\n');
                    }
                }
            } catch (IOException e) {
                // the process is gone
            }
        });
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

}
