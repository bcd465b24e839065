package dev.execache.benchmarks;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A proxied tool call through {@code execache serve} against the same call made directly to
 * the downstream server, with the same client (the MCP Java SDK's), in one run: the median of
 * a cached read-only call (a hit) and of a miss (new arguments each time) through execache,
 * and of the direct call.
 *
 * <p>{@code java -cp benchmarks.jar dev.execache.benchmarks.GatewayFigures EXECACHE_JAR LAB_SERVER_MJS [ROUNDS]}
 */
public final class GatewayFigures {
    private GatewayFigures() {
    }

    public static void main(String[] args) throws Exception {
        Path jar = Path.of(args[0]);
        Path lab = Path.of(args[1]);
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 301;
        Path dir = Files.createTempDirectory("execache-gateway-bench");
        Path config = Files.writeString(dir.resolve("execache.yaml"),
                "servers:\n  lab:\n    command: node\n    args: [\"" + lab + "\"]\n");
        String java = ProcessHandle.current().info().command().orElse("java");
        try (McpSyncClient direct = client("node", List.of(lab.toString()));
                McpSyncClient gateway = client(java, List.of("-jar", jar.toString(), "serve", "--store", "memory",
                        "--config", config.toString()))) {
            for (int i = 0; i < 50; i++) {
                call(direct, "get_count", Map.of("who", "warm" + i));
                call(gateway, "lab__get_count", Map.of("who", "warm" + i));
                call(gateway, "lab__get_count", Map.of("who", "warm" + i));
            }
            long[] directNanos = new long[rounds];
            long[] hitNanos = new long[rounds];
            long[] missNanos = new long[rounds];
            long[] ownNanos = new long[rounds];
            for (int i = 0; i < rounds; i++) {
                ownNanos[i] = call(gateway, "cache_stats", Map.of());
                directNanos[i] = call(direct, "get_count", Map.of("who", "d" + i));
                missNanos[i] = call(gateway, "lab__get_count", Map.of("who", "m" + i));
                hitNanos[i] = call(gateway, "lab__get_count", Map.of("who", "m" + i));
            }
            double directMicros = Samples.medianMicros(directNanos);
            double hitMicros = Samples.medianMicros(hitNanos);
            double missMicros = Samples.medianMicros(missNanos);
            System.out.printf(Locale.ROOT, "rounds: %d, interleaved (direct, miss, hit); medians%n", rounds);
            System.out.printf(Locale.ROOT, "execache's own cache_stats (floor):   %8.1f us%n", Samples.medianMicros(ownNanos));
            System.out.printf(Locale.ROOT, "direct call to the lab server:        %8.1f us%n", directMicros);
            System.out.printf(Locale.ROOT, "through execache, hit:                %8.1f us  (direct / hit = %.2fx)%n",
                    hitMicros, directMicros / hitMicros);
            System.out.printf(Locale.ROOT, "through execache, miss:               %8.1f us  (overhead over direct %+.1f us)%n",
                    missMicros, missMicros - directMicros);
        }
    }

    private static McpSyncClient client(String command, List<String> args) {
        StdioClientTransport transport = new StdioClientTransport(
                ServerParameters.builder(command).args(args).build(), new JacksonMcpJsonMapper(new ObjectMapper()));
        transport.setStdErrorHandler(line -> { });
        McpSyncClient client = McpClient.sync(transport)
                .requestTimeout(Duration.ofSeconds(60))
                .initializationTimeout(Duration.ofSeconds(60))
                .clientInfo(new McpSchema.Implementation("execache-bench", "1"))
                .build();
        client.initialize();
        return client;
    }

    private static long call(McpSyncClient client, String tool, Map<String, Object> args) {
        long start = System.nanoTime();
        McpSchema.CallToolResult result = client.callTool(new McpSchema.CallToolRequest(tool, args));
        long took = System.nanoTime() - start;
        if (Boolean.TRUE.equals(result.isError())) {
            throw new IllegalStateException(tool + " failed: " + result.content());
        }
        return took;
    }
}
