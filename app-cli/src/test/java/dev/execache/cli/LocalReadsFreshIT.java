package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.gateway.Downstream;
import dev.execache.gateway.Json;
import dev.execache.tools.mcp.HttpLab;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A local server's reads are never served stale by default, whatever the machine's load: {@code serve} on the
 * default store (SQLite) in front of {@code @modelcontextprotocol/server-filesystem}, with a busy loop per core
 * running all along. A file changed on disk is read fresh at once, by a tool call and by code, and after serve
 * restarts on the same store; a slow tool the configuration caches, and a remote server's read, are still answered
 * from the cache the second time.
 */
class LocalReadsFreshIT {
    @TempDir
    static Path dir;

    private static final List<Process> hogs = new ArrayList<>();
    private static HttpLab remote;
    private static Path files;
    private static Path config;
    private static Map<String, String> env;
    private static ServeProcess serve;

    @BeforeAll
    static void start() throws Exception {
        for (int i = 0; i < Runtime.getRuntime().availableProcessors(); i++) {
            hogs.add(new ProcessBuilder("sh", "-c", "while :; do :; done").start());
        }
        files = Files.createDirectories(dir.resolve("files")).toRealPath();
        remote = HttpLab.start("--era", "2025");
        config = Files.writeString(dir.resolve("execache.yaml"), """
                servers:
                  fs:
                    command: "%s"
                    args: ["%s"]
                  slow:
                    command: node
                    args: ["%s"]
                    ttl: 300s
                  remote:
                    url: "%s"
                """.formatted(Downstream.nodeModules().resolve(".bin/mcp-server-filesystem"), files,
                Downstream.nodeModules().resolveSibling("lab-server.mjs"), remote.url()));
        // no --store: the default, SQLite under XDG_CACHE_HOME
        env = Map.of("XDG_CACHE_HOME", dir.resolve("cache").toString(), "EXECACHE_WARM_POOL", "0");
        serve = ServeProcess.start(env, "--config", config.toString());
    }

    @AfterAll
    static void stop() throws Exception {
        try {
            if (serve != null) {
                serve.close();
            }
            if (remote != null) {
                remote.close();
            }
        } finally {
            hogs.forEach(Process::destroyForcibly);
        }
    }

    private static CallToolResult read(Path file) {
        return serve.call("fs__read_text_file", Map.of("path", file.toString()));
    }

    /** Runs code that reads {@code file} through the filesystem server and returns its text. */
    private static JsonNode readInCode(Path file) throws Exception {
        String code = "const r = await tools.fs.read_text_file({path: " + Json.MAPPER.writeValueAsString(file.toString())
                + "}); return typeof r === 'string' ? r : r.content;";
        CallToolResult result = serve.call("execute_code", Map.of("code", code));
        assertThat(result.isError()).as(ServeIT.text(result)).isNotEqualTo(Boolean.TRUE);
        return ServeIT.structured(result);
    }

    private static String status(CallToolResult result) {
        return Json.MAPPER.valueToTree(result.meta()).at("/dev.execache~1cache/status").textValue();
    }

    @Test
    void aFileChangedOnDiskIsReadFreshAtOnceByAToolCallAndByCode() throws Exception {
        Path notes = Files.writeString(files.resolve("notes.txt"), "first");
        CallToolResult before = read(notes);
        JsonNode ranBefore = readInCode(notes);
        JsonNode ranAgain = readInCode(notes);

        Files.writeString(notes, "second");
        CallToolResult after = read(notes);
        JsonNode ranAfter = readInCode(notes);

        assertThat(ServeIT.text(before)).isEqualTo("first");
        assertThat(status(before)).isEqualTo("bypass");
        assertThat(ranBefore.get("result").textValue()).isEqualTo("first");
        // the run's answer was not stored, so neither was the run: its read is asked again, never a hit
        assertThat(ranAgain.get("cache").textValue()).isEqualTo("revalidated");
        assertThat(ranAgain.get("result").textValue()).isEqualTo("first");
        assertThat(ServeIT.text(after)).isEqualTo("second");
        assertThat(status(after)).isEqualTo("bypass");
        assertThat(ranAfter.get("result").textValue()).isEqualTo("second");
        assertThat(ranAfter.get("cache").textValue()).isEqualTo("miss");
        JsonNode stats = ServeIT.structured(serve.call("cache_stats", Map.of()));
        assertThat(stats.at("/uncacheable/local_server").longValue()).isGreaterThanOrEqualTo(2);
        assertThat(stats.at("/uncacheable/tool_answer_not_stored").longValue()).isGreaterThanOrEqualTo(3);
    }

    @Test
    void aFileChangedWhileServeWasStoppedIsReadFreshByTheNextServeOnTheSameStore() throws Exception {
        Path notes = Files.writeString(files.resolve("restart.txt"), "before the restart");
        read(notes);
        readInCode(notes);
        assertThat(status(serve.call("slow__sleep", Map.of("ms", 150)))).isEqualTo("miss");
        serve.close();

        Files.writeString(notes, "after the restart");
        serve = ServeProcess.start(env, "--config", config.toString());
        CallToolResult read = read(notes);
        JsonNode ran = readInCode(notes);

        assertThat(ServeIT.text(read)).isEqualTo("after the restart");
        assertThat(status(read)).isEqualTo("bypass");
        assertThat(ran.get("result").textValue()).isEqualTo("after the restart");
        assertThat(ran.get("cache").textValue()).isEqualTo("miss");
        // the same store: what the first serve stored of the slow tool is still there
        assertThat(status(serve.call("slow__sleep", Map.of("ms", 150)))).isEqualTo("hit");
        assertThat(ServeIT.structured(serve.call("cache_stats", Map.of())).get("store").textValue()).isEqualTo("sqlite");
    }

    @Test
    void aSlowToolTheConfigurationCachesAndARemoteServersReadAreAnsweredFromTheCacheTheSecondTime() {
        CallToolResult slowFirst = serve.call("slow__sleep", Map.of("ms", 200));
        CallToolResult slowSecond = serve.call("slow__sleep", Map.of("ms", 200));
        CallToolResult remoteFirst = serve.call("remote__get_count", Map.of("who", "fresh-it"));
        CallToolResult remoteSecond = serve.call("remote__get_count", Map.of("who", "fresh-it"));

        assertThat(status(slowFirst)).isEqualTo("miss");
        assertThat(status(slowSecond)).isEqualTo("hit");
        assertThat(ServeIT.text(slowSecond)).isEqualTo(ServeIT.text(slowFirst));
        assertThat(status(remoteFirst)).isEqualTo("miss");
        assertThat(status(remoteSecond)).isEqualTo("hit");
    }
}
