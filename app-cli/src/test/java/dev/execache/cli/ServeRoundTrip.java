package dev.execache.cli;

import dev.execache.gateway.TestDeno;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Measures, in one run, the median {@code execute_code} round trip over MCP (the SDK's client
 * on the stdio of {@code execache serve --store memory}) for a hit and for a warm miss of
 * {@code return 1 + 1}, beside a bare {@code deno run} of the same code. Not a test: figures
 * are printed, never asserted.
 *
 * <pre>
 * ./mvnw -B -pl app-cli -am package -DskipTests
 * java -Dexecache.jar=app-cli/target/execache.jar \
 *     -cp app-cli/target/test-classes:gateway/target/test-classes:app-cli/target/execache.jar dev.execache.cli.ServeRoundTrip
 * </pre>
 */
public final class ServeRoundTrip {
    private static final String CODE = "return 1 + 1";

    private ServeRoundTrip() {
    }

    public static void main(String[] args) throws Exception {
        int hits = 2000;
        int misses = 200;
        int bare = 30;
        long[] hitNanos;
        long[] missNanos;
        long[] pacedMissNanos;
        try (ServeProcess server = ServeProcess.start("--store", "memory", "--max-entries", "10000")) {
            expect(server.call("execute_code", Map.of("code", CODE)), "miss");
            for (int i = 0; i < 200; i++) {
                server.call("execute_code", Map.of("code", CODE + " // warm-up " + i));
                server.call("execute_code", Map.of("code", CODE));
            }
            hitNanos = time(hits, i -> expect(server.call("execute_code", Map.of("code", CODE)), "hit"));
            missNanos = time(misses, i -> expect(server.call("execute_code", Map.of("code", CODE + " // " + i)), "miss"));
            pacedMissNanos = new long[misses / 4];
            for (int i = 0; i < pacedMissNanos.length; i++) {
                Thread.sleep(250);
                int n = i;
                pacedMissNanos[i] = time(1, unused -> expect(server.call("execute_code",
                        Map.of("code", CODE + " // paced " + n)), "miss"))[0];
            }
        }
        Path deno = TestDeno.executable();
        Path script = Files.createTempFile("execache-bare-", ".js");
        Files.writeString(script, "console.log(JSON.stringify(await (async () => { " + CODE + " })()));\n");
        bareRun(deno, script);
        long[] bareNanos = time(bare, i -> bareRun(deno, script));
        Files.delete(script);

        System.out.printf(Locale.ROOT, "execute_code over MCP (stdio, SDK client): %d hits, %d warm misses back to back, "
                + "%d misses 250 ms apart (pool refilled); bare deno run x%d%n", hits, misses, misses / 4, bare);
        row("hit", hitNanos);
        row("warm miss", missNanos);
        row("paced miss", pacedMissNanos);
        row("bare deno run", bareNanos);
        System.out.printf(Locale.ROOT, "warm miss / bare deno run: %.2f; hit / warm miss: %.3f%n",
                median(missNanos) / median(bareNanos), median(hitNanos) / median(missNanos));
        System.exit(0);
    }

    private interface Step {
        void run(int i) throws Exception;
    }

    private static long[] time(int n, Step step) throws Exception {
        long[] nanos = new long[n];
        for (int i = 0; i < n; i++) {
            long start = System.nanoTime();
            step.run(i);
            nanos[i] = System.nanoTime() - start;
        }
        return nanos;
    }

    private static void expect(CallToolResult result, String status) {
        String actual = ServeIT.structured(result).path("cache").asText();
        if (result.isError() || !actual.equals(status)) {
            throw new IllegalStateException("expected a " + status + ", got " + result);
        }
    }

    private static void bareRun(Path deno, Path script) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(deno.toString(), "run", "--quiet", "--no-prompt", script.toString())
                .redirectErrorStream(true).start();
        String out = new String(process.getInputStream().readAllBytes()).trim();
        if (process.waitFor() != 0 || !out.equals("2")) {
            throw new IllegalStateException("bare deno run printed: " + out);
        }
    }

    private static double median(long[] nanos) {
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2] / 1e6;
    }

    private static void row(String name, long[] nanos) {
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        System.out.printf(Locale.ROOT, "  %-14s median %8.3f ms   p10 %8.3f ms   p90 %8.3f ms%n", name,
                sorted[sorted.length / 2] / 1e6, sorted[sorted.length / 10] / 1e6, sorted[sorted.length * 9 / 10] / 1e6);
    }
}
