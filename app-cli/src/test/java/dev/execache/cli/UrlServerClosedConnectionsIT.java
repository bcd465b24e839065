package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.tools.mcp.HttpLab;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A url server that closes a kept-alive connection just as the next request is sent on it (its keep-alive time ran
 * out then): every request, a POST too, goes again on a new connection, so nothing the person asked fails for it.
 * The lab closes every connection at its second request, so each request after the first meets that moment.
 */
class UrlServerClosedConnectionsIT {
    private static HttpLab lab;

    @TempDir
    Path dir;

    @BeforeAll
    static void startLab() throws IOException {
        lab = HttpLab.start("--era", "2025", "--oauth", "execache-client:lab-secret-0123456789",
                "--close-reused-connections");
    }

    @AfterAll
    static void stopLab() throws InterruptedException {
        lab.close();
    }

    @Test
    void tokenRequestsAndToolCallsAreSentAgainOnANewConnection() throws Exception {
        Files.writeString(dir.resolve("execache.yaml"), "servers:\n  lab:\n    url: \"" + lab.url() + "\"\n"
                + "    oauth:\n      client_id: execache-client\n      client_secret: \"${LAB_SECRET}\"\n");
        Files.writeString(dir.resolve("count.ts"), "const first = await tools.lab.get_count({who: 'a'});\n"
                + "const second = await tools.lab.increment({});\n"
                + "return { first, second };\n");

        String[] run = execache("run", "count.ts");

        assertThat(run[0]).as(run[2]).isEqualTo("0");
        assertThat(run[1]).contains("\"who\":\"a\"").contains("counter");
        assertThat(run[2]).doesNotContain("header parser").doesNotContain("failed");
    }

    /** {@code execache ARGS} in a process of its own, as a person runs it; returns its exit code, stdout and stderr. */
    private String[] execache(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"),
                "-jar", System.getProperty("execache.jar")));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile());
        builder.environment().put("EXECACHE_NO_DAEMON", "1");
        builder.environment().put("LAB_SECRET", "lab-secret-0123456789");
        builder.environment().put("XDG_CACHE_HOME", dir.resolve("cache").toString());
        builder.environment().put("XDG_RUNTIME_DIR", dir.resolve("run").toString());
        builder.redirectError(dir.resolve("stderr.txt").toFile());
        Process process = builder.start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(120, TimeUnit.SECONDS)).isTrue();
        return new String[] {Integer.toString(process.exitValue()), out, Files.readString(dir.resolve("stderr.txt"))};
    }
}
