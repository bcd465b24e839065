package dev.execache.sandbox;

import dev.execache.core.Freshness;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.execache.core.CacheStatus;
import dev.execache.core.ErrorType;
import dev.execache.core.ExecutionRequest;
import dev.execache.core.ExecutionResult;
import dev.execache.core.Limits;
import dev.execache.core.ToolResult;
import dev.execache.core.spi.CodeToolCall;
import dev.execache.core.spi.CodeTools;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sandbox contract with every request run on a runner from the warm pool: each request gets
 * a sandbox whose pool was started with the request's own flags, and waits until a runner is
 * waiting for it.
 */
class WarmPoolTest extends SandboxContract {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final Map<LaunchFlags, DenoSandbox> SANDBOXES = new ConcurrentHashMap<>();

    @AfterAll
    static void closeSandboxes() {
        SANDBOXES.values().forEach(DenoSandbox::close);
    }

    @Override
    ExecutionResult execute(ExecutionRequest request) {
        DenoSandbox sandbox = SANDBOXES.computeIfAbsent(LaunchFlags.of(request.limits()), flags -> started(
                new DenoSandbox(DenoSandboxSettings.builder().denoExecutable(deno())
                        .warmPoolSize(1).warmPoolLimits(request.limits()).build())));
        return warmRun(sandbox, request);
    }

    @Override
    DenoSandbox newSandbox(Path cacheDirectory) {
        return new DenoSandbox(settingsWith(cacheDirectory).warmPoolSize(2).build());
    }

    @Override
    int waitingRunnersAllowed() {
        return 2;
    }

    /** The first request finds Deno and starts the pool; it runs in a process of its own. */
    private static DenoSandbox started(DenoSandbox sandbox) {
        sandbox.execute(ExecutionRequest.of("return 0", null));
        return sandbox;
    }

    private static ExecutionResult warmRun(DenoSandbox sandbox, ExecutionRequest request) {
        try {
            assertThat(sandbox.awaitWarmRunner(WAIT)).as("a runner waits in the pool").isTrue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
        long warmBefore = sandbox.warmRuns();
        ExecutionResult result = sandbox.execute(request);
        if (!refusedBeforeAnyRunner(result)) {
            assertThat(sandbox.warmRuns()).as("runs that went to a pooled runner").isEqualTo(warmBefore + 1);
        }
        return result;
    }

    /** A request whose read paths hold a link leading out is refused before a runner is taken. */
    private static boolean refusedBeforeAnyRunner(ExecutionResult result) {
        return result.error() != null && result.error().type() == ErrorType.PERMISSION_ERROR
                && result.error().message().contains("symbolic link that leads out");
    }

    @Test
    void aLinkMadeWhileARunnerWaitsIsRefusedToo(@TempDir Path workspace, @TempDir Path elsewhere) throws Exception {
        Files.writeString(elsewhere.resolve("secret.txt"), "the secret");
        Limits limits = Limits.DEFAULTS.withAllowRead(List.of(workspace.toString()));
        try (DenoSandbox sandbox = new DenoSandbox(DenoSandboxSettings.builder().denoExecutable(deno())
                .warmPoolSize(1).warmPoolLimits(limits).build())) {
            started(sandbox);
            assertThat(sandbox.awaitWarmRunner(WAIT)).isTrue();
            Files.createSymbolicLink(workspace.resolve("door"), elsewhere);

            ExecutionResult result = sandbox.execute(new ExecutionRequest("return Deno.readTextFileSync(context.path)",
                    Map.of("path", workspace.resolve("door/secret.txt").toString()), Set.of(), limits));

            assertThat(result.error()).isNotNull();
            assertThat(result.error().type()).isEqualTo(ErrorType.PERMISSION_ERROR);
            assertThat(result.value() + result.console()).doesNotContain("the secret");
        }
    }

    @Test
    void aRequestForOtherFlagsNeverRunsOnAPooledRunner(@TempDir Path cache, @TempDir Path readable) throws Exception {
        try (DenoSandbox sandbox = started(newSandbox(cache))) {
            assertThat(sandbox.awaitWarmRunner(WAIT)).isTrue();
            long warmBefore = sandbox.warmRuns();

            ExecutionResult result = sandbox.execute(new ExecutionRequest(
                    "return [Deno.permissions.querySync({name: 'read', path: context.path}).state,"
                            + " (await import('node:v8')).getHeapStatistics().heap_size_limit < 400 * 1024 * 1024]",
                    Map.of("path", readable.toString()), Set.of(),
                    Limits.DEFAULTS.withAllowRead(List.of(readable.toString())).withMemoryMb(128)));

            assertThat(result.value()).as("%s", result.error()).isEqualTo("[\"granted\",true]");
            assertThat(sandbox.warmRuns()).isEqualTo(warmBefore);
            assertThat(warmRun(sandbox, ExecutionRequest.of(
                    "return Deno.permissions.querySync({name: 'read', path: '/'}).state", null)).value())
                    .isEqualTo("\"denied\"");
        }
    }

    @Test
    void thePoolRefillsInTheBackgroundAfterEachRun(@TempDir Path cache) throws Exception {
        try (DenoSandbox sandbox = started(newSandbox(cache))) {
            for (int i = 0; i < 5; i++) {
                assertThat(warmRun(sandbox, ExecutionRequest.of("return context", i)).value()).isEqualTo(Integer.toString(i));
            }
            awaitIdleRunners(sandbox, 2);
            assertThat(awaitProcessesOf(cache, 2)).hasSize(2);
        }
    }

    @Test
    void anEmptyPoolNeverMakesARequestWait(@TempDir Path cache) throws Exception {
        try (DenoSandbox sandbox = started(newSandbox(cache))) {
            awaitIdleRunners(sandbox, 2);
            List<ExecutionResult> results = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                results.add(sandbox.execute(ExecutionRequest.of("return context", i)));
            }

            assertThat(results).extracting(ExecutionResult::value).containsExactly("0", "1", "2", "3", "4", "5");
        }
    }

    @Test
    void aRunnerThatDiesWhileWaitingIsReplaced(@TempDir Path cache) throws Exception {
        try (DenoSandbox sandbox = started(newSandbox(cache))) {
            awaitIdleRunners(sandbox, 2);
            Runner victim = sandbox.pool().idleRunners().get(0);

            victim.process().toHandle().destroyForcibly();

            long deadline = System.nanoTime() + WAIT.toNanos();
            while (sandbox.pool().idleRunners().contains(victim) || sandbox.pool().idleRunners().size() < 2) {
                assertThat(System.nanoTime()).as("the dead runner replaced in time").isLessThan(deadline);
                sandbox.pool().awaitIdle(3, Duration.ofMillis(20));
            }
            assertThat(sandbox.pool().idleRunners()).allMatch(Runner::isAlive);
            assertThat(warmRun(sandbox, ExecutionRequest.of("return 'still warm'", null)).value())
                    .isEqualTo("\"still warm\"");
        }
    }

    @Test
    void closeEndsEveryWaitingRunner(@TempDir Path cache) throws Exception {
        DenoSandbox sandbox = started(newSandbox(cache));
        awaitIdleRunners(sandbox, 2);
        List<Process> waiting = sandbox.pool().idleRunners().stream().map(Runner::process).toList();

        sandbox.close();

        assertThat(waiting).noneMatch(Process::isAlive);
        assertThat(processesOf(cache)).isEmpty();
    }

    @Test
    void noRunnerOutlivesItsJvmEndedBySigterm(@TempDir Path cache) throws Exception {
        assertNoRunnerOutlives(cache, Process::destroy);
    }

    @Test
    void noRunnerOutlivesItsJvmEndedBySigkill(@TempDir Path cache) throws Exception {
        assertNoRunnerOutlives(cache, Process::destroyForcibly);
    }

    /**
     * SIGTERM while code runs: the exit's hook kills Deno while the run reads its output, and the
     * run must end as stopped by the exit (a CancellationException, which serve answers as "the
     * server is shutting down"), however the kill reached the reader (the end of the output, or
     * the JDK closing the stream under it). A few JVMs, as the two ways race.
     */
    @Test
    void aRunStoppedByItsJvmsExitIsCancelledNotASandboxFailure(@TempDir Path cache) throws Exception {
        for (int round = 0; round < 5; round++) {
            // the outcome to a file: a pipe read while its process exits can fail with "Stream closed" (the race here)
            Path outcome = cache.resolve("outcome-" + round);
            Process jvm = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp", System.getProperty("java.class.path"), RunHolder.class.getName(),
                    deno().toString(), cache.toString(), outcome.toString())
                    .redirectErrorStream(true).start();
            String started;
            try (BufferedReader out = new BufferedReader(new InputStreamReader(jvm.getInputStream(), StandardCharsets.UTF_8))) {
                started = out.readLine();
                assertThat(started).as("the holder's run started").isEqualTo("running");

                jvm.destroy();

                assertThat(jvm.waitFor(30, TimeUnit.SECONDS)).isTrue();
            }
            assertThat(Files.readString(outcome)).startsWith("CancellationException");
        }
    }

    /**
     * Runs code that says it started (a tool call) and then never ends, and writes how the run
     * ended when the JVM exits.
     */
    static final class RunHolder {
        public static void main(String[] args) throws Exception {
            DenoSandbox sandbox = new DenoSandbox(DenoSandboxSettings.builder().denoExecutable(Path.of(args[0]))
                    .cacheDirectory(Path.of(args[1])).warmPoolSize(0).build());
            CountDownLatch started = new CountDownLatch(1);
            CodeTools tools = new CodeTools() {
                @Override
                public Map<String, List<String>> reachable() {
                    return Map.of("holder", List.of("started"));
                }

                @Override
                public CodeToolCall call(String server, String tool, String argumentsJson, String agent, Freshness freshness) {
                    started.countDown();
                    ToolResult answer = ToolResult.ok("true");
                    return new CodeToolCall("holder__started", "1", answer, false, CacheStatus.BYPASS,
                            answer.json().length());
                }
            };
            String[] outcome = {"none"};
            Thread run = new Thread(() -> {
                try {
                    ExecutionResult result = sandbox.execute(
                            ExecutionRequest.of("await tools.holder.started({});\nwhile (true) {}", null), tools);
                    outcome[0] = "result " + (result.isSuccess() ? "success" : result.error().type());
                } catch (RuntimeException e) {
                    outcome[0] = e.getClass().getSimpleName() + ": " + e.getMessage();
                }
            });
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    run.join(20_000);
                    Files.writeString(Path.of(args[2]), outcome[0]);
                } catch (InterruptedException | IOException e) {
                    Thread.currentThread().interrupt();
                }
            }));
            run.start();
            System.out.println(started.await(30, TimeUnit.SECONDS) ? "running" : "not started: " + outcome[0]);
            System.out.flush();
            run.join();
        }
    }

    private static void assertNoRunnerOutlives(Path cache, Consumer<Process> end) throws Exception {
        Process jvm = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), PoolHolder.class.getName(),
                deno().toString(), cache.toString())
                .redirectErrorStream(true).start();
        List<Long> runners;
        try (BufferedReader out = new BufferedReader(new InputStreamReader(jvm.getInputStream(), StandardCharsets.UTF_8))) {
            String line = out.readLine();
            assertThat(line).as("the holder's report").startsWith("runners ");
            runners = Arrays.stream(line.substring("runners ".length()).split(" ")).map(Long::parseLong).toList();
            assertThat(runners).hasSize(2).allMatch(WarmPoolTest::isRunning);

            end.accept(jvm);
            assertThat(jvm.waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
        for (long pid : runners) {
            awaitGone(pid, WAIT);
        }
        // no Deno of that JVM left anywhere, refills included
        awaitNoProcessUsing(cache, WAIT);
    }

    /** Until no process on the machine (orphans are no one's descendants) uses the cache directory. */
    private static void awaitNoProcessUsing(Path cache, Duration timeout) {
        await().alias("no process uses " + cache).atMost(timeout).pollInterval(Duration.ofMillis(20))
                .until(() -> ProcessHandle.allProcesses().filter(ProcessHandle::isAlive)
                        .noneMatch(process -> usesCache(process, cache)));
    }

    private static void awaitIdleRunners(DenoSandbox sandbox, int count) throws InterruptedException {
        if (!sandbox.pool().awaitIdle(count, WAIT)) {
            throw new AssertionError(count + " runners were not waiting within " + WAIT);
        }
    }

    /** Started in a JVM of its own: fills a pool, says which processes wait in it, then waits to be ended. */
    static final class PoolHolder {
        public static void main(String[] args) throws Exception {
            DenoSandbox sandbox = new DenoSandbox(DenoSandboxSettings.builder().denoExecutable(Path.of(args[0]))
                    .cacheDirectory(Path.of(args[1])).warmPoolSize(2).build());
            sandbox.execute(ExecutionRequest.of("return 0", null));
            awaitIdleRunners(sandbox, 2);
            StringBuilder line = new StringBuilder("runners");
            for (Runner runner : sandbox.pool().idleRunners()) {
                line.append(' ').append(runner.process().pid());
            }
            System.out.println(line);
            System.out.flush();
            Thread.sleep(Long.MAX_VALUE);
        }
    }

    /** Alive and not a zombie waiting to be reaped. */
    private static boolean isRunning(long pid) {
        if (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
            try {
                String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
                return stat.charAt(stat.lastIndexOf(')') + 2) != 'Z';
            } catch (IOException e) {
                return false;
            }
        }
        return false;
    }

    private static void awaitGone(long pid, Duration timeout) {
        await().alias("runner " + pid + " gone after its JVM ended").atMost(timeout).pollInterval(Duration.ofMillis(20))
                .until(() -> !isRunning(pid));
    }
}
