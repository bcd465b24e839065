package dev.execache.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.core.ExecutionRequest;
import dev.execache.core.ExecutionResult;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The sandbox contract with a Deno process started for every run (no warm pool). */
class ColdStartTest extends SandboxContract {
    private static DenoSandbox sandbox;

    @BeforeAll
    static void startSandbox() {
        sandbox = new DenoSandbox(DenoSandboxSettings.builder().denoExecutable(deno()).warmPoolSize(0).build());
    }

    @AfterAll
    static void closeSandbox() {
        sandbox.close();
    }

    @Override
    ExecutionResult execute(ExecutionRequest request) {
        return sandbox.execute(request);
    }

    @Override
    DenoSandbox newSandbox(Path cacheDirectory) {
        return new DenoSandbox(settingsWith(cacheDirectory).warmPoolSize(0).build());
    }

    @Override
    int waitingRunnersAllowed() {
        return 0;
    }

    @Test
    void withoutAPoolNoProcessWaitsBetweenRuns(@org.junit.jupiter.api.io.TempDir Path cache) throws Exception {
        try (DenoSandbox own = newSandbox(cache)) {
            assertThat(own.execute(ExecutionRequest.of("return 1", null)).value()).isEqualTo("1");

            assertThat(awaitProcessesOf(cache, 0)).isEmpty();
            assertThat(own.warmRuns()).isZero();
            assertThat(own.pool()).isNull();
        }
    }
}
