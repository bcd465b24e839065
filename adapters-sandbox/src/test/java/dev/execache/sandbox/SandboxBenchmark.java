package dev.execache.sandbox;

import dev.execache.core.ExecutionRequest;
import dev.execache.core.ExecutionResult;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Whole-process benchmark, not a test: {@code return 1 + 1} through the sandbox, started cold and
 * from the warm pool, against a bare {@code deno run} of the same wrapped code with the same
 * flags, in one run, medians of 30.
 *
 * <pre>
 * ./mvnw -B -q -pl adapters-sandbox -am test-compile
 * java -cp core/target/classes:adapters-sandbox/target/classes:adapters-sandbox/target/test-classes \
 *     dev.execache.sandbox.SandboxBenchmark
 * </pre>
 */
public final class SandboxBenchmark {
    private static final int RUNS = 30;
    private static final int WARM_UP = 5;
    private static final String CODE = "return 1 + 1";
    private static final long SETTLE_MILLIS = 150;

    private SandboxBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        DenoSandboxSettings settings = DenoSandboxSettings.defaults();
        try (DenoSandbox cold = new DenoSandbox(settings.toBuilder().warmPoolSize(0).build());
                DenoSandbox warm = new DenoSandbox(settings.toBuilder().warmPoolSize(2).build())) {
            ExecutionRequest request = ExecutionRequest.of(CODE, null);
            DenoRuntime runtime = DenoRuntime.prepare(new DenoLocator(settings).locate(), settings.cacheDirectory());
            Path bare = Files.createTempFile("execache-bare-", ".ts");
            try {
                Files.writeString(bare, "const main = async function (context) {\n" + CODE + "\n};\n"
                        + "console.log(JSON.stringify(await main(null)));\n");
                List<String> command = new ArrayList<>(LaunchFlags.DEFAULTS.command(runtime));
                command.set(command.size() - 1, bare.toString());

                warm.execute(request);
                for (int i = 0; i < WARM_UP; i++) {
                    sandboxRun(cold, request);
                    bareRun(command, runtime);
                    warmRun(warm, request);
                }
                List<Double> coldMillis = new ArrayList<>();
                List<Double> warmMillis = new ArrayList<>();
                List<Double> bareMillis = new ArrayList<>();
                for (int i = 0; i < RUNS; i++) {
                    coldMillis.add(sandboxRun(cold, request));
                    bareMillis.add(bareRun(command, runtime));
                    warmMillis.add(warmRun(warm, request));
                }
                double coldMedian = median(coldMillis);
                double warmMedian = median(warmMillis);
                double bareMedian = median(bareMillis);
                System.out.printf("deno %s, `%s`, %d runs of each, interleaved, medians%n",
                        DenoSandboxSettings.DENO_VERSION, CODE, RUNS);
                System.out.printf("bare deno run             %6.1f ms%n", bareMedian);
                System.out.printf("sandbox, cold start       %6.1f ms  %.2fx bare%n", coldMedian, coldMedian / bareMedian);
                System.out.printf("sandbox, warm pool        %6.1f ms  %.2fx bare, %.1fx faster than cold%n",
                        warmMedian, warmMedian / bareMedian, coldMedian / warmMedian);
            } finally {
                Files.deleteIfExists(bare);
            }
        }
    }

    /**
     * A run handed to a runner that is already waiting. Afterwards the pool gets time to start
     * its replacement, so that its start-up does not compete with the next measurement.
     */
    private static double warmRun(DenoSandbox sandbox, ExecutionRequest request) throws InterruptedException {
        if (!sandbox.pool().awaitIdle(2, Duration.ofSeconds(30))) {
            throw new IllegalStateException("the pool did not refill");
        }
        double millis = sandboxRun(sandbox, request);
        if (!sandbox.pool().awaitIdle(2, Duration.ofSeconds(30))) {
            throw new IllegalStateException("the pool did not refill");
        }
        TimeUnit.MILLISECONDS.sleep(SETTLE_MILLIS);
        return millis;
    }

    private static double sandboxRun(DenoSandbox sandbox, ExecutionRequest request) {
        long start = System.nanoTime();
        ExecutionResult result = sandbox.execute(request);
        double millis = (System.nanoTime() - start) / 1e6;
        if (!"2".equals(result.value())) {
            throw new IllegalStateException("unexpected result: " + result);
        }
        return millis;
    }

    private static double bareRun(List<String> command, DenoRuntime runtime) throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(command).directory(runtime.denoDirectory().toFile())
                .redirectErrorStream(true);
        builder.environment().clear();
        builder.environment().putAll(Map.of("DENO_DIR", runtime.denoDirectory().toString(),
                "DENO_EMIT_CACHE_MODE", "disable", "DENO_NO_UPDATE_CHECK", "1", "DENO_NO_PACKAGE_JSON", "1",
                "NO_COLOR", "1"));
        long start = System.nanoTime();
        Process process = builder.start();
        process.getOutputStream().close();
        String output;
        try (InputStream in = process.getInputStream()) {
            output = new String(in.readAllBytes()).strip();
        }
        process.waitFor();
        double millis = (System.nanoTime() - start) / 1e6;
        if (!output.equals("2")) {
            throw new IllegalStateException("unexpected output of bare deno run: " + output);
        }
        return millis;
    }

    private static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        int middle = sorted.size() / 2;
        return sorted.size() % 2 == 1 ? sorted.get(middle) : (sorted.get(middle - 1) + sorted.get(middle)) / 2;
    }
}
