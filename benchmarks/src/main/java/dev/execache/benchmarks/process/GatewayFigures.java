package dev.execache.benchmarks.process;

import dev.execache.benchmarks.support.Samples;
import io.modelcontextprotocol.client.McpSyncClient;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * A gateway tool call through {@code execache serve} against the same call made directly to
 * the downstream server, with the same client (the MCP Java SDK's), in one run: the median of
 * a cached read-only call (a hit) and of a miss (new arguments each time) through execache,
 * and of the direct call.
 *
 * <p>{@code java -cp benchmarks.jar dev.execache.benchmarks.process.GatewayFigures EXECACHE_JAR LAB_SERVER_MJS [ROUNDS]}
 */
public final class GatewayFigures {
    private GatewayFigures() {
    }

    public static void main(String[] args) throws Exception {
        ServerArguments arguments = ServerArguments.of(args, 301);
        int rounds = arguments.rounds();
        try (McpSyncClient direct = McpClients.direct(arguments.server());
                McpSyncClient gateway = McpClients.serve(arguments.jar(), arguments.server(), "execache-gateway-bench")) {
            McpClients.Rounds sdk = McpClients.rounds(direct, gateway, 50, rounds);
            long[] rawDirectNanos = new long[rounds];
            long[] rawHitNanos = new long[rounds];
            long[] rawOwnNanos = new long[rounds];
            try (RawLineClient rawDirect = RawLineClient.of("node", List.of(arguments.server().toString()));
                    RawLineClient rawGateway = new RawLineClient(McpClients.serveCommand(arguments.jar(), arguments.server(),
                            "execache-gateway-bench"))) {
                for (int i = 0; i < 50; i++) {
                    rawDirect.call("get_count", "{\"who\":\"warm" + i + "\"}");
                    rawGateway.call("lab__get_count", "{\"who\":\"warm\"}");
                    rawGateway.call("cache_stats", "{}");
                }
                for (int i = 0; i < rounds; i++) {
                    rawOwnNanos[i] = rawGateway.call("cache_stats", "{}");
                    rawDirectNanos[i] = rawDirect.call("get_count", "{\"who\":\"r" + i + "\"}");
                    rawHitNanos[i] = rawGateway.call("lab__get_count", "{\"who\":\"warm\"}");
                }
            }
            double directMicros = sdk.directMicros();
            double hitMicros = sdk.hitMicros();
            System.out.printf(Locale.ROOT, "rounds: %d, interleaved (direct, miss, hit); medians%n", rounds);
            sdk.print("lab server");
            double rawDirect = Samples.medianMicros(rawDirectNanos);
            double rawHit = Samples.medianMicros(rawHitNanos);
            System.out.printf(Locale.ROOT, "bare line client (no SDK), same servers, %d rounds:%n", rounds);
            System.out.printf(Locale.ROOT, "  direct call to the lab server:      %8.1f us  (SDK client adds %.1f us)%n",
                    rawDirect, directMicros - rawDirect);
            System.out.printf(Locale.ROOT, "  through execache, hit:              %8.1f us  (SDK client adds %.1f us;"
                    + " direct / hit = %.2fx)%n", rawHit, hitMicros - rawHit, rawDirect / rawHit);
            System.out.printf(Locale.ROOT, "  execache's own cache_stats:         %8.1f us%n", Samples.medianMicros(rawOwnNanos));
        }
    }
}
