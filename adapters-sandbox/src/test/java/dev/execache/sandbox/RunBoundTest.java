package dev.execache.sandbox;

import dev.execache.core.Freshness;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.execache.core.CacheStatus;
import dev.execache.core.ExecutionRequest;
import dev.execache.core.ExecutionResult;
import dev.execache.core.Limits;
import dev.execache.core.ToolResult;
import dev.execache.core.spi.CodeToolCall;
import dev.execache.core.spi.CodeTools;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
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

    /**
     * Each run's code says when it starts and ends (tool calls), so the highest number running at
     * once is counted, not sampled: the runs that got in are held until every other caller waits
     * for a slot (or one more got in), then let go.
     */
    @Test
    void atMostTheBoundRunAtOnce() throws Exception {
        int runs = 6;
        try (DenoSandbox sandbox = new DenoSandbox(SandboxContract.settingsWith(cache).warmPoolSize(0)
                .maxConcurrentRuns(2).build())) {
            RunsAtOnce counted = new RunsAtOnce();
            List<Thread> callerThreads = new CopyOnWriteArrayList<>();
            ExecutorService callers = Executors.newFixedThreadPool(runs, task -> {
                Thread thread = new Thread(task, "caller");
                callerThreads.add(thread);
                return thread;
            });
            try {
                List<Future<ExecutionResult>> started = new ArrayList<>();
                for (int i = 0; i < runs; i++) {
                    int n = i;
                    started.add(callers.submit(() -> sandbox.execute(ExecutionRequest.of(
                            "await tools.runs.enter({}); await tools.runs.leave({}); return " + n, Map.of()), counted)));
                }
                awaitCondition(() -> counted.in() > 2
                        || counted.in() == 2 && callerThreads.stream().filter(RunBoundTest::waitsForASlot).count() == runs - 2);
                counted.release();

                for (int i = 0; i < runs; i++) {
                    assertThat(started.get(i).get(2, TimeUnit.MINUTES).value()).isEqualTo(Integer.toString(i));
                }
                assertThat(counted.most()).as("the highest number of runs at once").isEqualTo(2);
            } finally {
                counted.release();
                callers.shutdownNow();
            }
        }
    }

    private static boolean waitsForASlot(Thread caller) {
        List<String> frames = Arrays.stream(caller.getStackTrace())
                .map(frame -> frame.getClassName() + "." + frame.getMethodName()).toList();
        return caller.getState() == Thread.State.WAITING && frames.contains("java.util.concurrent.Semaphore.acquire")
                && frames.contains(DenoSandbox.class.getName() + ".execute");
    }

    /** The tools {@code runs.enter} and {@code runs.leave}: counts the runs between them, holds them in enter until let go. */
    private static final class RunsAtOnce implements CodeTools {
        private int in;
        private int most;
        private boolean released;

        @Override
        public Map<String, List<String>> reachable() {
            return Map.of("runs", List.of("enter", "leave"));
        }

        @Override
        public synchronized CodeToolCall call(String server, String tool, String argumentsJson, String agent, Freshness freshness) {
            if (tool.equals("enter")) {
                in++;
                most = Math.max(most, in);
                long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
                while (!released && System.nanoTime() < deadline) {
                    try {
                        TimeUnit.NANOSECONDS.timedWait(this, deadline - System.nanoTime());
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        break;
                    }
                }
            } else {
                in--;
            }
            ToolResult answer = ToolResult.ok("true");
            return new CodeToolCall("runs__" + tool, "1", answer, false, CacheStatus.BYPASS, answer.json().length());
        }

        synchronized int in() {
            return in;
        }

        synchronized int most() {
            return most;
        }

        synchronized void release() {
            released = true;
            notifyAll();
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

    private static void awaitCondition(BooleanSupplier condition) {
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(10)).until(condition::getAsBoolean);
    }
}
