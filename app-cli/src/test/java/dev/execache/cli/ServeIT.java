package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.TextContent;
import io.modelcontextprotocol.spec.McpSchema.Tool;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
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
        return Output.JSON.valueToTree(result.structuredContent());
    }

    static String text(CallToolResult result) {
        return ((TextContent) result.content().get(0)).text();
    }

    @Test
    void itInitializesAndListsTheFourToolsWithSchemasAndTruthfulAnnotations() {
        try (ServeProcess server = ServeProcess.start("--store", "memory")) {
            Map<String, Tool> tools = server.client().listTools().tools().stream()
                    .collect(Collectors.toMap(Tool::name, Function.identity()));

            assertThat(server.client().getServerInfo().name()).isEqualTo("execache");
            assertThat(tools).containsOnlyKeys("execute_code", "cache_stats", "invalidate_tool", "clear_cache");
            assertThat(tools.get("execute_code").inputSchema()).containsEntry("required", List.of("code"));
            assertThat(tools.get("cache_stats").annotations().readOnlyHint()).isTrue();
            assertThat(tools.get("clear_cache").annotations().destructiveHint()).isTrue();
            assertThat(tools.get("invalidate_tool").annotations().destructiveHint()).isTrue();
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
            assertThat(text(notAnObject)).contains("context").contains("object expected");
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
    void stdoutCarriesOnlyTheProtocolAndAMalformedLineGetsAnErrorThenTheEndOfInputEndsIt() throws Exception {
        Process process = new ProcessBuilder(commandLine("--store", "memory")).start();
        StringBuilder stderr = new StringBuilder();
        Thread errors = drain(process, stderr);
        try (RawMcpClient client = new RawMcpClient(process.getOutputStream(), process.getInputStream())) {
            client.initialize();
            client.send("this is not JSON");
            JsonNode parseError = client.response(null);
            JsonNode stats = client.callTool("cache_stats", Map.of());

            assertThat(parseError.at("/error/code").intValue()).isEqualTo(-32700);
            assertThat(stats.at("/structuredContent/store").textValue()).isEqualTo("memory");
        }
        assertThat(process.waitFor(20, TimeUnit.SECONDS)).isTrue();
        errors.join();
        assertThat(process.exitValue()).isZero();
        assertThat(stderr).contains("serving MCP on stdio");
    }

    @Test
    void sigtermEndsItCleanly() throws Exception {
        Process process = new ProcessBuilder(commandLine("--store", "memory")).start();
        StringBuilder stderr = new StringBuilder();
        drain(process, stderr);
        try (RawMcpClient client = new RawMcpClient(process.getOutputStream(), process.getInputStream())) {
            client.initialize();

            process.destroy();

            assertThat(process.waitFor(20, TimeUnit.SECONDS)).isTrue();
            assertThat(process.exitValue()).isEqualTo(143);
        }
    }

    static List<String> commandLine(String... arguments) {
        List<String> command = new java.util.ArrayList<>();
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

    static void pause(Duration duration) throws InterruptedException {
        Thread.sleep(duration.toMillis());
    }
}
