package dev.execache.benchmarks.library;

import dev.execache.benchmarks.support.Samples;
import dev.execache.benchmarks.support.Table;
import dev.execache.core.ExecutionRequest;
import dev.execache.core.ExecutionResult;
import dev.execache.sandbox.DenoSandbox;
import dev.execache.sandbox.DenoSandboxSettings;
import dev.execache.sandbox.SandboxProbe;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code return 1 + 1} through the sandbox from the warm pool and started cold, and as a bare
 * {@code deno run} of the same code wrapped the same way with the same flags. The three
 * alternate run by run, so that load from other processes falls on all of them alike.
 */
public final class SandboxFigures {
    public static final int RUNS = 41;
    private static final int WARM_UP = 5;
    private static final int POOL_SIZE = 2;
    private static final String CODE = "return 1 + 1";
    /** After a warm run the pool starts a replacement; it must not compete with the next measurement. */
    private static final long SETTLE_MILLIS = 150;

    private SandboxFigures() {
    }

    /** Returns the medians in ms: cold start, bare {@code deno run}, warm pool. */
    public static double[] measure(Table table, SandboxProbe probe, DenoSandboxSettings settings) throws Exception {
        ExecutionRequest request = ExecutionRequest.of(CODE, null);
        Path bare = Files.createTempFile("execache-bare-", ".ts");
        try (DenoSandbox cold = new DenoSandbox(settings.toBuilder().warmPoolSize(0).build());
                DenoSandbox warm = new DenoSandbox(settings.toBuilder().warmPoolSize(POOL_SIZE).build())) {
            Files.writeString(bare, "const main = async function (context) {\n" + CODE + "\n};\n"
                    + "console.log(JSON.stringify(await main(null)));\n");
            ProcessBuilder bareRun = probe.bareRun(bare);
            warm.execute(request);
            for (int i = 0; i < WARM_UP; i++) {
                run(cold, request);
                run(bareRun);
                warmRun(warm, request);
            }
            List<Double> coldMillis = new ArrayList<>();
            List<Double> bareMillis = new ArrayList<>();
            List<Double> warmMillis = new ArrayList<>();
            for (int i = 0; i < RUNS; i++) {
                coldMillis.add(run(cold, request));
                bareMillis.add(run(bareRun));
                warmMillis.add(warmRun(warm, request));
            }
            table.note("Sandbox: " + RUNS + " runs of each after " + WARM_UP + " warm-up rounds, in turns; a warm run is"
                    + " handed to a runner already waiting (pool of " + POOL_SIZE + ", refilled and settled before each);"
                    + " the bare `deno run` has the cold start's command, flags and environment, with the code wrapped"
                    + " in an async function in a file in place of the runner.");
            double coldMedian = Samples.median(coldMillis);
            double bareMedian = Samples.median(bareMillis);
            double warmMedian = Samples.median(warmMillis);
            table.add("sandbox `return 1 + 1`, warm pool (median of " + RUNS + ")", Table.millis(warmMedian),
                    "cold start " + Table.millis(coldMedian), Table.times(coldMedian, warmMedian) + " faster",
                    Table.aim("< 5 ms and ≥ 8x faster than cold", warmMedian < 5 && coldMedian / warmMedian >= 8));
            table.add("sandbox `return 1 + 1`, cold start", Table.millis(coldMedian),
                    "bare `deno run` " + Table.millis(bareMedian), Table.times(coldMedian, bareMedian),
                    Table.aim("< 30 ms, ≤ 1.3x bare", coldMedian < 30 && coldMedian / bareMedian <= 1.3));
            table.add("sandbox `return 1 + 1`, warm pool vs bare", Table.millis(warmMedian),
                    "bare `deno run` " + Table.millis(bareMedian), Table.times(bareMedian, warmMedian) + " faster", "");
            return new double[] {coldMedian, bareMedian, warmMedian};
        } finally {
            Files.deleteIfExists(bare);
        }
    }

    /** A run handed to runners that are already waiting, as they are between an agent's requests. */
    private static double warmRun(DenoSandbox sandbox, ExecutionRequest request) throws InterruptedException {
        WarmPool.await(sandbox, POOL_SIZE);
        double millis = run(sandbox, request);
        WarmPool.await(sandbox, POOL_SIZE);
        TimeUnit.MILLISECONDS.sleep(SETTLE_MILLIS);
        return millis;
    }

    private static double run(DenoSandbox sandbox, ExecutionRequest request) {
        long start = System.nanoTime();
        ExecutionResult result = sandbox.execute(request);
        double millis = Samples.millisSince(start);
        if (!"2".equals(result.value())) {
            throw new IllegalStateException("unexpected result: " + result);
        }
        return millis;
    }

    private static double run(ProcessBuilder bareRun) throws IOException, InterruptedException {
        long start = System.nanoTime();
        Process process = bareRun.start();
        process.getOutputStream().close();
        String output;
        try (InputStream in = process.getInputStream()) {
            output = new String(in.readAllBytes(), StandardCharsets.UTF_8).strip();
        }
        process.waitFor();
        double millis = Samples.millisSince(start);
        if (!output.equals("2")) {
            throw new IllegalStateException("unexpected output of the bare deno run: " + output);
        }
        return millis;
    }
}
