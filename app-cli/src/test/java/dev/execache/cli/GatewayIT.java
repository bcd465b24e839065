package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.gateway.Downstream;
import dev.execache.store.redis.RedisServerProcess;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.TextContent;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The packaged {@code execache serve} in front of a downstream MCP server, alone and as a fleet on one Redis. */
class GatewayIT {
    private static RedisServerProcess redis;

    @TempDir
    Path dir;

    @BeforeAll
    static void startRedis() throws IOException {
        redis = RedisServerProcess.start();
    }

    @AfterAll
    static void stopRedis() {
        redis.close();
    }

    private Path config() throws IOException {
        return config(Path.of(""));
    }

    /** @param listGate where the lab's tools/list waits for a file (see lab-server.mjs); the empty path: it does not */
    private Path config(Path listGate) throws IOException {
        return Files.writeString(dir.resolve("execache.yaml"), """
                servers:
                  lab:
                    command: node
                    args: ["%s"]
                    env: {LAB_LIST_GATE: "%s"}
                    cache: true  # a local server's reads are asked every time unless it says to cache them
                """.formatted(Downstream.nodeModules().resolveSibling("lab-server.mjs"), listGate));
    }

    private static String text(CallToolResult result) {
        return ((TextContent) result.content().get(0)).text();
    }

    @Test
    void serveSaysPerServerThatItConnectedPrefixesTheServersStderrWithItsNameAndPassesOnItsInstructions() throws Exception {
        Path listGate = dir.resolve("list-gate");
        // initialize may wait for the lab as long as it takes to start here, so its instructions are in the answer;
        // it waits for them only, not for the lab's tools, which the lab lists once the gate is open
        try (ServeProcess serve = ServeProcess.start("--store", "memory", "--config", config(listGate).toString(),
                "--wait-for-servers", "3m")) {
            assertThat(serve.client().getServerInstructions()).startsWith("execache runs TypeScript/JavaScript")
                    .endsWith("\n\n## Server lab\n\nThe lab counts the calls it serves.");
            assertThat(listGate).as("the lab cannot have listed its tools yet").doesNotExist();
            Files.createFile(listGate);
            serve.awaitStderr(line -> line.contains("server lab: connected (lab 1.0.0), 15 tools"), Duration.ofSeconds(30));
            serve.awaitStderr(line -> line.contains("lab: lab server ready"), Duration.ofSeconds(30));

            String first = text(serve.call("lab__get_count", Map.of()));
            String second = text(serve.call("lab__get_count", Map.of()));

            assertThat(first).contains("\"served\":1");
            assertThat(second).isEqualTo(first);
        }
    }

    @Test
    void twoServeInstancesOnOneRedisShareToolCallHits() throws Exception {
        String url = redis.url() + "/6";
        Path config = config();
        try (ServeProcess one = ServeProcess.start("--store", "redis", "--redis-url", url, "--config", config.toString());
                ServeProcess two = ServeProcess.start("--store", "redis", "--redis-url", url, "--config", config.toString())) {
            String fromOne = text(one.call("lab__get_count", Map.of("who", "fleet")));
            String fromTwo = text(two.call("lab__get_count", Map.of("who", "fleet")));
            String twoOwnServer = text(two.call("lab__get_count", Map.of("who", "only two")));

            assertThat(fromOne).contains("\"served\":1");
            assertThat(fromTwo).isEqualTo(fromOne);
            assertThat(twoOwnServer).as("instance two's own lab server served its first call only now")
                    .contains("\"served\":1");
        }
    }

    @Test
    void twoServeInstancesOnOneRedisCallAToolOnceWhenTheSameCallArrivesAtBoth() throws Exception {
        String url = redis.url() + "/7";
        Path config = config();
        try (ServeProcess one = ServeProcess.start("--store", "redis", "--redis-url", url, "--config", config.toString());
                ServeProcess two = ServeProcess.start("--store", "redis", "--redis-url", url, "--config", config.toString())) {
            Map<String, Object> slow = Map.of("ms", 3_000);
            CompletableFuture<CallToolResult> first =
                    CompletableFuture.supplyAsync(() -> one.call("lab__sleep", slow));
            one.awaitStderr(line -> line.contains("lab: sleeping 3000 ms"), Duration.ofSeconds(60));

            String fromTwo = text(two.call("lab__sleep", slow));
            String fromOne = text(first.get());

            assertThat(fromTwo).as("instance two waited for one's call instead of asking its own lab server")
                    .isEqualTo(fromOne);
            assertThat(two.stderr()).noneMatch(line -> line.contains("lab: sleeping"));
        }
    }
}
