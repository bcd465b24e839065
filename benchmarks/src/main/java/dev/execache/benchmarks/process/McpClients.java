package dev.execache.benchmarks.process;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.execache.benchmarks.support.Samples;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The MCP clients the gateway and bridge figures measure with: the MCP Java SDK's, over stdio,
 * the same for a downstream server called directly and for {@code execache serve} in front of it.
 */
final class McpClients {
    private McpClients() {
    }

    /** A client of the lab server, started with node. */
    static McpSyncClient direct(Path lab) {
        return client(List.of("node", lab.toString()));
    }

    /** A client of {@code execache serve} (memory store) with the lab server as its one downstream server. */
    static McpSyncClient serve(Path jar, Path lab, String tempPrefix) throws IOException {
        return client(serveCommand(jar, lab, tempPrefix));
    }

    /** The command line of {@code execache serve} (memory store) in front of the lab server. */
    static List<String> serveCommand(Path jar, Path lab, String tempPrefix) throws IOException {
        return Serve.command(jar, Files.createTempDirectory(tempPrefix), lab);
    }

    /** Calls a tool; returns how long the round trip took in nanoseconds. A tool error ends the benchmark. */
    static long call(McpSyncClient client, String tool, Map<String, Object> args) {
        long start = System.nanoTime();
        McpSchema.CallToolResult result = client.callTool(new McpSchema.CallToolRequest(tool, args));
        long took = System.nanoTime() - start;
        if (Boolean.TRUE.equals(result.isError())) {
            throw new IllegalStateException(tool + " failed: " + result.content());
        }
        return took;
    }

    /** A client of the stdio server started by this command line. */
    static McpSyncClient client(List<String> command) {
        StdioClientTransport transport = new StdioClientTransport(
                ServerParameters.builder(command.get(0)).args(command.subList(1, command.size())).build(),
                new JacksonMcpJsonMapper(new ObjectMapper()));
        transport.setStdErrorHandler(line -> { });
        return initialized(transport);
    }

    /** A client of the Streamable HTTP server at {@code url}, on its {@code /mcp} endpoint. */
    static McpSyncClient http(String url) {
        return initialized(HttpClientStreamableHttpTransport.builder(url).endpoint("/mcp")
                .jsonMapper(new JacksonMcpJsonMapper(new ObjectMapper())).build());
    }

    private static McpSyncClient initialized(McpClientTransport transport) {
        McpSyncClient client = McpClient.sync(transport)
                .requestTimeout(Duration.ofSeconds(60))
                .initializationTimeout(Duration.ofSeconds(60))
                .clientInfo(new McpSchema.Implementation("execache-bench", "1"))
                .build();
        client.initialize();
        return client;
    }

    /**
     * A server's tool {@code get_count} called directly and as {@code lab__get_count} through
     * {@code execache serve}, with the same client: after {@code warmUp} rounds, {@code rounds}
     * rounds of serve's own {@code cache_stats}, the direct call, a miss (new arguments) and a hit
     * (the same again), in turns.
     */
    static Rounds rounds(McpSyncClient direct, McpSyncClient gateway, int warmUp, int rounds) {
        for (int i = 0; i < warmUp; i++) {
            call(direct, "get_count", Map.of("who", "warm" + i));
            call(gateway, "lab__get_count", Map.of("who", "warm" + i));
            call(gateway, "lab__get_count", Map.of("who", "warm" + i));
        }
        Rounds measured = new Rounds(new long[rounds], new long[rounds], new long[rounds], new long[rounds]);
        for (int i = 0; i < rounds; i++) {
            measured.own[i] = call(gateway, "cache_stats", Map.of());
            measured.direct[i] = call(direct, "get_count", Map.of("who", "d" + i));
            measured.miss[i] = call(gateway, "lab__get_count", Map.of("who", "m" + i));
            measured.hit[i] = call(gateway, "lab__get_count", Map.of("who", "m" + i));
        }
        return measured;
    }

    /** The round trips of {@link #rounds}, in ns. */
    record Rounds(long[] own, long[] direct, long[] miss, long[] hit) {
        double directMicros() {
            return Samples.medianMicros(direct);
        }

        double hitMicros() {
            return Samples.medianMicros(hit);
        }

        /** Prints the medians, the direct call named for {@code server}. */
        void print(String server) {
            double directMicros = directMicros();
            double hitMicros = hitMicros();
            double missMicros = Samples.medianMicros(miss);
            System.out.printf(Locale.ROOT, "execache's own cache_stats (floor):   %9.1f us%n", Samples.medianMicros(own));
            System.out.printf(Locale.ROOT, "direct call to the %-18s %9.1f us%n", server + ":", directMicros);
            System.out.printf(Locale.ROOT, "through execache, hit:                %9.1f us  (direct / hit = %.2fx)%n",
                    hitMicros, directMicros / hitMicros);
            System.out.printf(Locale.ROOT, "through execache, miss:               %9.1f us  (overhead over direct %+.1f us)%n",
                    missMicros, missMicros - directMicros);
        }
    }
}
