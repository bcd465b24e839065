package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The official MCP conformance suite ({@code @modelcontextprotocol/conformance}, pinned in
 * package.json, on the Node 22 the {@code node} package brings) against {@code serve --http}:
 * every scenario that applies to a server with execache's tools, in both eras. The checks it is
 * expected to fail are in conformance-expected-failures.yml, each with its reason; any other
 * failure, or a listed check that passes, fails the scenario.
 */
class ServeHttpConformanceIT {
    private static HttpServeProcess server;

    @BeforeAll
    static void start() throws Exception {
        server = HttpServeProcess.start(Map.of("EXECACHE_WARM_POOL", "0"), "--store", "memory", "--http", "0");
    }

    @AfterAll
    static void stop() throws InterruptedException {
        if (server != null) {
            server.close();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"server-initialize", "ping", "logging-set-level", "tools-list", "dns-rebinding-protection",
        "http-header-validation", "server-stateless", "caching"})
    void scenarioPasses(String scenario) throws IOException, InterruptedException {
        Path modules = TypeScriptClient.nodeModules();
        Path node = modules.resolve("node/bin/node");
        Process suite = new ProcessBuilder(node.toString(), modules.resolve("@modelcontextprotocol/conformance/dist/index.js")
                .toString(), "server", "--url", server.url(), "--scenario", scenario, "--expected-failures",
                modules.getParent().resolve("conformance-expected-failures.yml").toString())
                .directory(modules.getParent().toFile())
                .redirectErrorStream(true)
                .start();
        String output = new String(suite.getInputStream().readAllBytes(), StandardCharsets.UTF_8)
                .replaceAll("\u001b\\[[0-9;]*m", "");
        assertThat(suite.waitFor(5, TimeUnit.MINUTES)).isTrue();

        List<String> summary = output.lines().filter(line -> line.startsWith("Passed:") || line.contains("~ ")
                || line.contains("✗")).toList();
        System.out.println("conformance " + scenario + ": " + String.join(" | ", summary));
        assertThat(suite.exitValue()).as(output).isZero();
    }
}
