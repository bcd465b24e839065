package dev.execache.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.core.ExecutionRequest;
import dev.execache.core.ExecutionResult;
import dev.execache.core.Limits;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The bound on runs at once, and what a waiting or running call does when it is cancelled. */
class RunBoundTest {
    @TempDir
    Path cache;

    @Test
    void runsBeyondTheBoundWaitTheirTurnAndTheWaitIsNotChargedToTheirTimeLimit() throws Exception {
        try (DenoSandbox sandbox = new DenoSandbox(SandboxContract.settingsWith(cache).warmPoolSize(0)
                .maxConcurrentRuns(1).build())) {
            ExecutorService callers = Executors.newFixedThreadPool(2);
            try {
                // the first holds the only slot until the test has seen the second one wait
                Future<ExecutionResult> first = callers.submit(() -> sandbox.execute(new ExecutionRequest(
                        "await new Promise(r => setTimeout(r, 5000)); return 'first'", Map.of(), Set.of(),
                        Limits.DEFAULTS)));
                awaitCondition(() -> sandbox.runsInProgress() == 1);
                Limits shortLimit = Limits.DEFAULTS.withTimeout(Duration.ofSeconds(2));
                Future<ExecutionResult> second = callers.submit(() -> sandbox.execute(
                        new ExecutionRequest("return 'second'", Map.of(), Set.of(), shortLimit)));

                assertThat(first.get(1, TimeUnit.MINUTES).value()).isEqualTo("\"first\"");
                assertThat(second.get(1, TimeUnit.MINUTES).value()).isEqualTo("\"second\"");
                assertThat(sandbox.runsInProgress()).isZero();
            } finally {
                callers.shutdownNow();
            }
        }
    }

    @Test
    void atMostTheBoundRunAtOnce() throws Exception {
        try (DenoSandbox sandbox = new DenoSandbox(SandboxContract.settingsWith(cache).warmPoolSize(0)
                .maxConcurrentRuns(2).build())) {
            ExecutorService callers = Executors.newFixedThreadPool(6);
            AtomicInteger most = new AtomicInteger();
            try {
                List<Future<ExecutionResult>> runs = new ArrayList<>();
                for (int i = 0; i < 6; i++) {
                    int n = i;
                    runs.add(callers.submit(() -> sandbox.execute(ExecutionRequest.of(
                            "await new Promise(r => setTimeout(r, 200)); return " + n, Map.of()))));
                }
                while (runs.stream().anyMatch(run -> !run.isDone())) {
                    most.accumulateAndGet(sandbox.runsInProgress(), Math::max);
                    Thread.sleep(5);
                }
                for (int i = 0; i < 6; i++) {
                    assertThat(runs.get(i).get().value()).isEqualTo(Integer.toString(i));
                }
                assertThat(most.get()).isBetween(1, 2);
            } finally {
                callers.shutdownNow();
            }
        }
    }

    @Test
    void aCallerInterruptedWhileItsCodeRunsEndsTheDenoProcess() throws Exception {
        try (DenoSandbox sandbox = new DenoSandbox(SandboxContract.settingsWith(cache).warmPoolSize(0).build())) {
            ExecutorService callers = Executors.newSingleThreadExecutor();
            try {
                Future<ExecutionResult> looping = callers.submit(() -> sandbox.execute(
                        ExecutionRequest.of("while (true) {}", Map.of())));
                // the runner is found once it is Deno itself (it starts as setpriv, then execs Deno)
                List<List<ProcessHandle>> seen = new ArrayList<>();
                awaitCondition(() -> {
                    List<ProcessHandle> running = ProcessHandle.current().descendants()
                            .filter(RunBoundTest::isDeno).filter(ProcessHandle::isAlive).toList();
                    seen.add(running);
                    return running.size() == 1;
                });
                List<ProcessHandle> runners = seen.get(seen.size() - 1);

                looping.cancel(true);

                awaitCondition(() -> runners.stream().noneMatch(ProcessHandle::isAlive));
                assertThat(runners).isNotEmpty().noneMatch(ProcessHandle::isAlive);
                assertThat(looping.isCancelled()).isTrue();
            } finally {
                callers.shutdownNow();
            }
        }
    }

    private static int deno(ProcessHandle parent) {
        return (int) parent.descendants().filter(RunBoundTest::isDeno).filter(ProcessHandle::isAlive).count();
    }

    private static boolean isDeno(ProcessHandle process) {
        return process.info().command().map(command -> command.endsWith("deno")).orElse(false);
    }

    private static void awaitCondition(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the condition never held");
            }
            Thread.sleep(10);
        }
    }
}
