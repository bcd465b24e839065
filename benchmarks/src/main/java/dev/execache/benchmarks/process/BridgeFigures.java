package dev.execache.benchmarks.process;

import dev.execache.benchmarks.support.Samples;
import io.modelcontextprotocol.client.McpSyncClient;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;

/**
 * The bridge's per-call cost: one {@code execute_code} run making 100 calls to a cached
 * read-only tool ({@code tools.lab.get_other}), against the same 100 calls made by the agent
 * one MCP round trip at a time through {@code execache serve} (each a hit of the tool cache),
 * and against 100 calls made directly to the server, with the same client, in one run. Each
 * round's code differs by a comment, so every run is a miss of the execution cache; a run that
 * makes no call is measured alike, to take the run's own cost out of the per-call figure.
 *
 * <p>{@code java -cp benchmarks.jar dev.execache.benchmarks.process.BridgeFigures EXECACHE_JAR LAB_SERVER_MJS [ROUNDS]}
 */
public final class BridgeFigures {
    private static final int CALLS = 100;

    private BridgeFigures() {
    }

    public static void main(String[] args) throws Exception {
        ServerArguments arguments = ServerArguments.of(args, 21);
        int rounds = arguments.rounds();
        try (McpSyncClient direct = McpClients.direct(arguments.server());
                McpSyncClient serve = McpClients.serve(arguments.jar(), arguments.server(), "execache-bridge-bench")) {
            for (int i = 0; i < 5; i++) {
                run(serve, "// warm " + i + "\nfor (let k = 0; k < " + CALLS + "; k++) await tools.lab.get_other({});"
                        + " return 1;");
                hundred(serve, "lab__get_other");
                hundred(direct, "get_other");
            }
            long[] bridge = new long[rounds];
            long[] empty = new long[rounds];
            long[] agent = new long[rounds];
            long[] straight = new long[rounds];
            for (int i = 0; i < rounds; i++) {
                empty[i] = run(serve, "// round " + i + "\nreturn 1;");
                bridge[i] = run(serve, "// round " + i + "\nfor (let k = 0; k < " + CALLS
                        + "; k++) await tools.lab.get_other({}); return 1;");
                agent[i] = hundred(serve, "lab__get_other");
                straight[i] = hundred(direct, "get_other");
            }
            double bridgeMs = Samples.medianMicros(bridge) / 1000;
            double emptyMs = Samples.medianMicros(empty) / 1000;
            double agentMs = Samples.medianMicros(agent) / 1000;
            double straightMs = Samples.medianMicros(straight) / 1000;
            System.out.printf(Locale.ROOT, "rounds: %d, interleaved; medians of %d calls each%n", rounds, CALLS);
            System.out.printf(Locale.ROOT, "execute_code, no call (the run itself):          %8.2f ms%n", emptyMs);
            System.out.printf(Locale.ROOT, "execute_code, %d bridge calls (cached tool):    %8.2f ms  (%.3f ms per call"
                    + " after the run's own cost)%n", CALLS, bridgeMs, (bridgeMs - emptyMs) / CALLS);
            System.out.printf(Locale.ROOT, "agent, %d MCP round trips through serve (hits): %8.2f ms  (%.3f ms per call)%n",
                    CALLS, agentMs, agentMs / CALLS);
            System.out.printf(Locale.ROOT, "agent, %d MCP round trips to the server:        %8.2f ms  (%.3f ms per call)%n",
                    CALLS, straightMs, straightMs / CALLS);
            System.out.printf(Locale.ROOT, "one execute_code instead of %d round trips: %.1fx less wall time than through"
                    + " serve; the agent reads one result instead of %d%n", CALLS, agentMs / bridgeMs, CALLS);
        }
    }

    private static long hundred(McpSyncClient client, String tool) {
        long took = 0;
        for (int k = 0; k < CALLS; k++) {
            took += McpClients.call(client, tool, Map.of());
        }
        return took;
    }

    private static long run(McpSyncClient serve, String code) {
        return McpClients.call(serve, "execute_code", Map.of("code", code));
    }

}
