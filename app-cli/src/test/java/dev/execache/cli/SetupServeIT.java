package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.execache.cli.command.ExitCode;
import dev.execache.gateway.Downstream;
import io.modelcontextprotocol.spec.McpSchema.TextContent;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The entry {@code execache setup} writes into a client, started as that client would start it
 * ({@code execache serve} with the entry's arguments): the servers that moved answer through it.
 */
class SetupServeIT {
    @TempDir
    Path dir;

    @Test
    void theServersThatMovedAnswerThroughTheExecacheEntryWrittenInTheirPlace() throws Exception {
        Path home = Files.createDirectories(dir.resolve("home"));
        Path desktop = home.resolve(".config/Claude/claude_desktop_config.json");
        Files.createDirectories(desktop.getParent());
        Files.writeString(desktop, """
                {
                  "mcpServers": {
                    "lab": {"command": "node", "args": ["%s"], "env": {"LAB_TOKEN": "SECRET_lab_token"}},
                    "memory": {"command": "%s", "env": {"MEMORY_FILE_PATH": "%s"}}
                  }
                }
                """.formatted(Downstream.nodeModules().resolveSibling("lab-server.mjs"),
                Downstream.nodeModules().resolve(".bin/mcp-server-memory"), dir.resolve("memory.jsonl")));
        Path execache = Files.writeString(Files.createDirectories(dir.resolve("bin")).resolve("execache"), "#!/bin/sh\n");
        Files.setPosixFilePermissions(execache, PosixFilePermissions.fromString("rwxr-xr-x"));
        Map<String, String> env = Map.of("HOME", home.toString(), "XDG_STATE_HOME", dir.resolve("state").toString(),
                "XDG_CACHE_HOME", dir.resolve("cache").toString());
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int exit = Main.run(new String[] {"setup", "--apply", "--execache", execache.toString()}, env, home,
                new ByteArrayInputStream(new byte[0]), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(out, true, StandardCharsets.UTF_8));
        assertThat(exit).as(out.toString(StandardCharsets.UTF_8)).isEqualTo(ExitCode.OK);

        JsonNode entry = new JsonMapper().readTree(desktop.toFile()).path("mcpServers").path("execache");
        assertThat(entry.path("command").asText()).isEqualTo(execache.toString());
        List<String> args = new ArrayList<>();
        entry.path("args").forEach(arg -> args.add(arg.asText()));
        assertThat(args.get(0)).isEqualTo("serve");

        try (ServeProcess serve = ServeProcess.start(env, args.subList(1, args.size()).toArray(String[]::new))) {
            serve.awaitStderr(line -> line.contains("server lab: connected"), Duration.ofSeconds(60));
            serve.awaitStderr(line -> line.contains("server memory: connected"), Duration.ofSeconds(60));

            String count = ((TextContent) serve.call("lab__get_count", Map.of()).content().get(0)).text();
            assertThat(count).contains("\"served\":1");
            assertThat(String.join("\n", serve.stderr())).doesNotContain("SECRET");
        }
    }
}
