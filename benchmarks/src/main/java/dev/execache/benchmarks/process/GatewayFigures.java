package dev.execache.benchmarks.process;

import dev.execache.benchmarks.support.Samples;
import io.modelcontextprotocol.client.McpSyncClient;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

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
        Path jar = Path.of(args[0]);
        Path lab = Path.of(args[1]);
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 301;
        try (McpSyncClient direct = McpClients.direct(lab);
                McpSyncClient gateway = McpClients.serve(jar, lab, "execache-gateway-bench")) {
            for (int i = 0; i < 50; i++) {
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
            long[] rawDirectNanos = new long[rounds];
            long[] rawHitNanos = new long[rounds];
            long[] rawOwnNanos = new long[rounds];
            try (RawLineClient rawDirect = RawLineClient.of("node", List.of(lab.toString()));
                    RawLineClient rawGateway = new RawLineClient(McpClients.serveCommand(jar, lab,
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
