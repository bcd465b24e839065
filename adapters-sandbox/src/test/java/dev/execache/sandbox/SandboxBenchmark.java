package dev.execache.sandbox;

import dev.execache.core.ExecutionRequest;
import dev.execache.core.ExecutionResult;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * Whole-process benchmark, not a test: {@code return 1 + 1} through the sandbox against a bare
 * {@code deno run} of the same wrapped code with the same flags, in one run, medians of 30.
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

    private SandboxBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        DenoSandboxSettings settings = DenoSandboxSettings.defaults();
        try (DenoSandbox sandbox = new DenoSandbox(settings)) {
            ExecutionRequest request = ExecutionRequest.of(CODE, null);
            DenoRuntime runtime = DenoRuntime.prepare(new DenoLocator(settings).locate(), settings.cacheDirectory());
            Path bare = Files.createTempFile("execache-bare-", ".ts");
            try {
                Files.writeString(bare, "const main = async function (context) {\n" + CODE + "\n};\n"
                        + "console.log(JSON.stringify(await main(null)));\n");
                List<String> command = new ArrayList<>(LaunchFlags.DEFAULTS.command(runtime));
                command.set(command.size() - 1, bare.toString());

                for (int i = 0; i < WARM_UP; i++) {
                    sandboxRun(sandbox, request);
                    bareRun(command, runtime);
                }
                List<Double> sandboxMillis = new ArrayList<>();
                List<Double> bareMillis = new ArrayList<>();
                for (int i = 0; i < RUNS; i++) {
                    sandboxMillis.add(sandboxRun(sandbox, request));
                    bareMillis.add(bareRun(command, runtime));
                }
                double sandboxMedian = median(sandboxMillis);
                double bareMedian = median(bareMillis);
                System.out.printf("deno %s, %d runs each, interleaved%n", runtime.executable(), RUNS);
                System.out.printf("sandbox  `%s` median %.1f ms (execution time reported %s)%n", CODE, sandboxMedian,
                        sandbox.execute(request).executionTime().toMillis() + " ms");
                System.out.printf("bare     deno run      median %.1f ms%n", bareMedian);
                System.out.printf("ratio    sandbox / bare %.2fx%n", sandboxMedian / bareMedian);
            } finally {
                Files.deleteIfExists(bare);
            }
        }
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
