package dev.execache.benchmarks.process;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.execache.benchmarks.support.Samples;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A url server behind {@code execache serve}: the tests' HTTP lab server (the TypeScript SDK's
 * Streamable HTTP transport, answers as SSE streams) adding 20 ms to every call, called directly
 * by the MCP Java SDK client over Streamable HTTP, and through serve (stdio) by the same SDK
 * client: the medians of the direct call, a hit and a miss, interleaved in one run.
 *
 * <p>{@code java -cp benchmarks.jar dev.execache.benchmarks.process.UrlGatewayFigures EXECACHE_JAR HTTP_LAB_SERVER_MJS [ROUNDS] [DELAY_MS]}
 */
public final class UrlGatewayFigures {
    private UrlGatewayFigures() {
    }

    public static void main(String[] args) throws Exception {
        Path jar = Path.of(args[0]);
        Path lab = Path.of(args[1]);
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 101;
        String delay = args.length > 3 ? args[3] : "20";
        Process server = new ProcessBuilder("node", lab.toString(), "--era", "2025", "--delay-ms", delay)
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        try {
            String line = new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8)).readLine();
            String url = "http://127.0.0.1:" + line.substring("listening ".length()).trim();
            Path dir = Files.createTempDirectory("execache-url-gateway-bench");
            Path config = Files.writeString(dir.resolve("execache.yaml"),
                    "servers:\n  lab:\n    url: \"" + url + "/mcp\"\n");
            try (McpSyncClient direct = http(url);
                    McpSyncClient gateway = McpClients.client(Serve.command(jar, config))) {
                for (int i = 0; i < 20; i++) {
                    McpClients.call(direct, "get_count", Map.of("who", "warm" + i));
                    McpClients.call(gateway, "lab__get_count", Map.of("who", "warm" + i));
                    McpClients.call(gateway, "lab__get_count", Map.of("who", "warm" + i));
                }
                long[] directNanos = new long[rounds];
                long[] hitNanos = new long[rounds];
                long[] missNanos = new long[rounds];
                long[] ownNanos = new long[rounds];
                for (int i = 0; i < rounds; i++) {
                    ownNanos[i] = McpClients.call(gateway, "cache_stats", Map.of());
                    directNanos[i] = McpClients.call(direct, "get_count", Map.of("who", "d" + i));
                    missNanos[i] = McpClients.call(gateway, "lab__get_count", Map.of("who", "m" + i));
                    hitNanos[i] = McpClients.call(gateway, "lab__get_count", Map.of("who", "m" + i));
                }
                double directMicros = Samples.medianMicros(directNanos);
                double hitMicros = Samples.medianMicros(hitNanos);
                double missMicros = Samples.medianMicros(missNanos);
                System.out.printf(Locale.ROOT, "url server adding %s ms a call; rounds: %d, interleaved (direct, miss, hit);"
                        + " medians, MCP Java SDK client (direct: Streamable HTTP; through execache: stdio)%n", delay, rounds);
                System.out.printf(Locale.ROOT, "execache's own cache_stats (floor):   %9.1f us%n", Samples.medianMicros(ownNanos));
                System.out.printf(Locale.ROOT, "direct call to the url server:        %9.1f us%n", directMicros);
                System.out.printf(Locale.ROOT, "through execache, hit:                %9.1f us  (direct / hit = %.1fx)%n",
                        hitMicros, directMicros / hitMicros);
                System.out.printf(Locale.ROOT, "through execache, miss:               %9.1f us  (overhead over direct %+.1f us)%n",
                        missMicros, missMicros - directMicros);
            }
        } finally {
            server.destroy();
            server.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static McpSyncClient http(String url) {
        McpSyncClient client = McpClient.sync(HttpClientStreamableHttpTransport.builder(url).endpoint("/mcp")
                        .jsonMapper(new JacksonMcpJsonMapper(new ObjectMapper())).build())
                .requestTimeout(Duration.ofSeconds(60))
                .initializationTimeout(Duration.ofSeconds(60))
                .clientInfo(new McpSchema.Implementation("execache-bench", "1"))
                .build();
        client.initialize();
        return client;
    }
}
