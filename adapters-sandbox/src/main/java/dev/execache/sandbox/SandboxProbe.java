package dev.execache.sandbox;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What a measurement of the sandbox needs (the benchmarks module): the exact command and
 * environment of a cold start, so that a bare {@code deno run} gets the same flags, and a way to
 * wait for the warm pool. Kept apart from {@link DenoSandbox} so that the sandbox's own surface
 * stays what a caller runs code with; the launch code stays package-private.
 */
public final class SandboxProbe {
    private final DenoRuntime runtime;

    private SandboxProbe(DenoRuntime runtime) {
        this.runtime = runtime;
    }

    /** Finds (or installs) Deno as a sandbox with these settings would. */
    public static SandboxProbe prepare(DenoSandboxSettings settings) {
        return new SandboxProbe(DenoRuntime.prepare(new DenoLocator(settings).locate(), settings.cacheDirectory()));
    }

    /** The first line of {@code deno --version}, e.g. {@code deno 2.9.6 (stable, release, x86_64-unknown-linux-gnu)}. */
    public String denoVersion() {
        try {
            Process process = new ProcessBuilder(runtime.executable().toString(), "--version")
                    .redirectErrorStream(true).start();
            String output;
            try (InputStream in = process.getInputStream()) {
                output = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            process.waitFor();
            return output.lines().findFirst().orElse("deno (unknown version)").strip();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /**
     * A {@code deno run} of {@code script} with the flags, working directory and environment
     * of a cold start under default limits: the sandbox's own command with the script in
     * place of the runner.
     */
    public ProcessBuilder bareRun(Path script) {
        List<String> command = new ArrayList<>(LaunchFlags.DEFAULTS.command(runtime));
        command.set(command.size() - 1, script.toString());
        ProcessBuilder builder = new ProcessBuilder(command)
                .directory(runtime.denoDirectory().toFile())
                .redirectErrorStream(true);
        builder.environment().clear();
        builder.environment().putAll(Map.of(
                "DENO_DIR", runtime.denoDirectory().toString(),
                "DENO_EMIT_CACHE_MODE", "disable",
                "DENO_NO_UPDATE_CHECK", "1",
                "DENO_NO_PACKAGE_JSON", "1",
                "NO_COLOR", "1"));
        return builder;
    }

    /**
     * Waits until {@code count} pooled runners wait for work. The pool exists once the sandbox
     * has run something; false when it has no pool or not that many runners by then.
     */
    public static boolean awaitWarmRunners(DenoSandbox sandbox, int count, Duration timeout) throws InterruptedException {
        WarmPool pool = sandbox.pool();
        return pool != null && pool.awaitIdle(count, timeout);
    }
}
