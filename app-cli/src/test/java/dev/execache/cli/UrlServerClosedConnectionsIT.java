package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.tools.mcp.HttpLab;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
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

        // --no-cache: the code runs, and reaches the server, whatever an earlier run stored
        CliProcess.Result run = new CliProcess(dir).env("LAB_SECRET", "lab-secret-0123456789")
                .run("run", "--no-cache", "count.ts");

        assertThat(run.exitCode()).as(run.toString()).isZero();
        assertThat(run.stdout()).contains("\"who\":\"a\"").contains("counter");
        assertThat(run.stderr()).doesNotContain("header parser").doesNotContain("failed");
    }
}
