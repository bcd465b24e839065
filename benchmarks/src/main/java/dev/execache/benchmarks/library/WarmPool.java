package dev.execache.benchmarks.library;

import dev.execache.sandbox.DenoSandbox;
import dev.execache.sandbox.SandboxProbe;
import java.time.Duration;

/** Waits for a sandbox's warm pool, so that a measured run is handed to a runner already waiting. */
final class WarmPool {

    private WarmPool() {
    }

    /** Returns once {@code size} runners wait; fails after 30 s. */
    static void await(DenoSandbox sandbox, int size) throws InterruptedException {
        if (!SandboxProbe.awaitWarmRunners(sandbox, size, Duration.ofSeconds(30))) {
            throw new IllegalStateException("the warm pool did not fill within 30 s");
        }
    }
}
