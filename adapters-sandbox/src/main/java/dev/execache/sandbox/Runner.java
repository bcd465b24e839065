package dev.execache.sandbox;

import dev.execache.core.CanonicalJson;
import dev.execache.core.ErrorType;
import dev.execache.core.ExecutionError;
import dev.execache.core.ExecutionRequest;
import dev.execache.core.ExecutionResult;
import dev.execache.core.Limits;
import dev.execache.core.spi.CodeTools;
import dev.execache.core.spi.ParentDeathSignal;
import dev.execache.core.spi.SandboxUnavailableException;
import dev.execache.core.ToolResult;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** One Deno process running the runner script: it runs exactly one request and is then ended. */
final class Runner {
    /** Deno's own resident memory before any code runs is about 30 MB; the limit is on top of it. */
    private static final long RUNTIME_ALLOWANCE_MB = 64;
    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    private static final long EXIT_WAIT_MILLIS = 2000;
    /** How long a stopped run waits for the tool call it cut off to give up (it is told at once). */
    private static final long CALL_CANCEL_WAIT_MILLIS = 500;
    private static final long REAP_WAIT_MILLIS = 10_000;
    /** Hex characters of the per-run secret; runner.js's SECRET_LENGTH (a test checks they agree). */
    static final int SECRET_LENGTH = 32;
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final List<String> OUT_OF_MEMORY_MARKERS = List.of(
            "Fatal JavaScript out of memory", "JavaScript heap out of memory", "Fatal process out of memory");
    private static final List<String> CRASH_REPORT_STARTS = List.of("<--- Last few GCs --->", "\n#\n# Fatal");
    private static final int V8_FATAL_EXIT_CODE = 133;
    private static final Path NEUTRAL_DIRECTORY = Path.of("/").toAbsolutePath();

    /**
     * A runner must not outlive the process that started it, whatever ended that one (SIGKILL
     * included), and code that loops forever never yields to a check of its own: on Linux the
     * kernel ends it (PR_SET_PDEATHSIG, set by util-linux's setpriv, which then execs Deno, so
     * the pid stays Deno's). The signal follows the thread that started the process; every
     * runner is started by a thread that outlives it (the caller waits for its run; the warm
     * pool's starter lives as long as the pool).
     */
    private static final List<String> DIES_WITH_HOST = ParentDeathSignal.commandPrefix();

    private final Process process;
    private final DenoRuntime runtime;
    private final LaunchFlags flags;
    private final long startedNanos = System.nanoTime();

    private Runner(Process process, DenoRuntime runtime, LaunchFlags flags) {
        this.process = process;
        this.runtime = runtime;
        this.flags = flags;
    }

    static Runner start(DenoRuntime runtime, LaunchFlags flags) {
        // a neutral working directory: Deno.cwd() and paths built from it say nothing of the host
        ProcessBuilder builder = new ProcessBuilder()
                .directory(NEUTRAL_DIRECTORY.toFile())
                .redirectErrorStream(true);
        Map<String, String> environment = builder.environment();
        environment.clear();
        builder.command(flags.command(runtime, runtime.launcherBehind(DIES_WITH_HOST, environment)));
        environment.put("DENO_DIR", runtime.denoDirectory().toString());
        environment.put("DENO_EMIT_CACHE_MODE", "disable");
        environment.put("DENO_NO_UPDATE_CHECK", "1");
        environment.put("DENO_NO_PACKAGE_JSON", "1");
        environment.put("NO_COLOR", "1");
        try {
            Process process = builder.start();
            LiveProcesses.add(process);
            return new Runner(process, runtime, flags);
        } catch (IOException e) {
            throw new SandboxUnavailableException("Deno " + runtime.executable() + " could not be started: "
                    + e.getMessage() + ". To fix: check that the file is a working Deno 2 executable.", e);
        }
    }

    boolean isAlive() {
        return process.isAlive();
    }

    Process process() {
        return process;
    }

    Duration age() {
        return Duration.ofNanos(System.nanoTime() - startedNanos);
    }

    /**
     * Hands the request over and waits for its result under the request's limits, then ends
     * the process.
     *
     * @param startNanos when the caller started to wait, for the execution time
     */
    ExecutionResult run(ExecutionRequest request, CodeTools tools, Executor io, long startNanos) {
        boolean ended = false;
        try {
            ExecutionResult result = runUnderLimits(request, tools, io, startNanos);
            ended = true;
            if (!result.isSuccess() && LiveProcesses.exiting()) {
                // killed because the JVM is exiting (SIGTERM): not the code's failure
                throw new CancellationException("the process is shutting down: the run was stopped");
            }
            return result;
        } catch (SandboxUnavailableException e) {
            if (LiveProcesses.exiting()) {
                // the exit's hook killed Deno while its output was being read: the same stop as above
                throw new CancellationException("the process is shutting down: the run was stopped");
            }
            throw e;
        } finally {
            if (!ended) {
                kill();
            }
        }
    }

    private ExecutionResult runUnderLimits(ExecutionRequest request, CodeTools tools, Executor io, long startNanos) {
        Limits limits = request.limits();
        byte[] secret = HexFormat.of().formatHex(randomBytes()).getBytes(StandardCharsets.US_ASCII);
        ModuleSource source = new ModuleSource(request.code(), runtime.runnerUrlPrefix());
        Map<String, List<String>> reachable = tools.reachable();
        byte[] payload = payload(secret, source, request,
                ReadAccess.readableWorkingDirectory(limits.workingDirectory(), flags.allowRead()), reachable);
        OutputStream stdin = process.getOutputStream();
        ToolCalls calls = reachable.isEmpty() ? null : new ToolCalls(tools, stdin);
        FrameReader reader = new FrameReader(secret, limits.maxOutputBytes(), limits.maxResultBytes(), calls);
        CompletableFuture<FrameReader.Outcome> outcome = new CompletableFuture<>();
        try {
            io.execute(() -> read(payload, stdin, calls != null, reader, outcome));
        } catch (RejectedExecutionException e) {
            throw new IllegalStateException("the sandbox is closed", e);
        }
        return awaitOutcome(outcome, reader, calls, source, limits, startNanos);
    }

    /**
     * Hands the request over on stdin, then reads stdout (with stderr) to its end or the run's.
     * With tools, stdin stays open for the answers to the code's calls until the run ends.
     */
    private void read(byte[] payload, OutputStream stdin, boolean keepStdin, FrameReader reader,
            CompletableFuture<FrameReader.Outcome> outcome) {
        try {
            stdin.write(payload);
            stdin.flush();
        } catch (IOException e) {
            // the process is already gone; its output tells why
        }
        if (!keepStdin) {
            closeQuietly(stdin);
        }
        try (InputStream stdout = process.getInputStream()) {
            outcome.complete(reader.read(stdout));
        } catch (Throwable e) {
            outcome.completeExceptionally(e);
        } finally {
            closeQuietly(stdin);
        }
    }

    /**
     * Answers the code's tool calls, one at a time as the runner makes them: each CALL frame's
     * server, tool and arguments go to the run's tools, the answer back on stdin (see runner.js).
     * The calls are made on the thread that reads the runner's output; when the run ends, the
     * call in flight is cancelled by interrupting that thread, and no call is made after.
     */
    private static final class ToolCalls implements FrameReader.Calls {
        private final CodeTools tools;
        private final OutputStream stdin;
        private long number;
        /** The thread making a call now, null between calls; guarded by this. */
        private Thread calling;
        private boolean cancelled;

        ToolCalls(CodeTools tools, OutputStream stdin) {
            this.tools = tools;
            this.stdin = stdin;
        }

        @Override
        public void call(byte[] payload) throws IOException {
            number++;
            String text = new String(payload, StandardCharsets.UTF_8);
            List<String> fields = serverToolAndArguments(text);
            ToolResult answer;
            if (fields == null) {
                answer = ToolResult.error("the tool call could not be read");
            } else {
                synchronized (this) {
                    if (cancelled) {
                        return;
                    }
                    calling = Thread.currentThread();
                }
                try {
                    answer = tools.callAfter(fields.get(0), fields.get(1), fields.get(3), readable(fields.get(2)))
                            .answer();
                } catch (CancellationException e) {
                    synchronized (this) {
                        if (cancelled) {
                            // the run ended while the tool worked: nobody waits for the answer
                            return;
                        }
                    }
                    // cancelled by something else: the code still waits, and gets an error
                    answer = ToolResult.error("the call was cancelled: " + e.getMessage());
                } finally {
                    synchronized (this) {
                        calling = null;
                        // an interrupt meant for this call must not reach the rest of the reading
                        Thread.interrupted();
                    }
                }
            }
            FrameReader.Answer kind = answer.isError() ? FrameReader.Answer.ERROR : FrameReader.Answer.VALUE;
            byte[] body = answer.json().getBytes(StandardCharsets.UTF_8);
            byte[] header = (kind.code + Long.toString(number) + ":" + body.length + "\n").getBytes(StandardCharsets.US_ASCII);
            try {
                stdin.write(header);
                stdin.write(body);
                stdin.flush();
            } catch (IOException e) {
                // the run ended while the tool worked: nobody waits for the answer
            }
        }

        /** Cancels the call in flight, if any, and any call after; returns whether one was in flight. */
        synchronized boolean cancel() {
            cancelled = true;
            if (calling == null) {
                return false;
            }
            calling.interrupt();
            return true;
        }

        /** How many earlier answers the code could have read, as the runner counted them; all of them when unreadable. */
        private int readable(String count) {
            try {
                return Integer.parseInt(count);
            } catch (NumberFormatException e) {
                return (int) Math.min(Integer.MAX_VALUE, number - 1);
            }
        }

        private static List<String> serverToolAndArguments(String text) {
            try {
                return FrameFields.read(text, 3, "tool call");
            } catch (IllegalArgumentException e) {
                return null;
            }
        }
    }

    private ExecutionResult awaitOutcome(CompletableFuture<FrameReader.Outcome> outcome, FrameReader reader,
            ToolCalls calls, ModuleSource source, Limits limits, long startNanos) {
        long deadline = startNanos + limits.timeout().toNanos();
        long memoryLimitKib = (limits.memoryMb() + RUNTIME_ALLOWANCE_MB) * 1024;
        Stop stop = null;
        long residentKib = 0;
        FrameReader.Outcome finished = null;
        try {
            while (finished == null) {
                long wait = Math.min(POLL_NANOS, deadline - System.nanoTime());
                if (wait <= 0) {
                    stop = Stop.TIMEOUT;
                    break;
                }
                try {
                    finished = outcome.get(wait, TimeUnit.NANOSECONDS);
                } catch (TimeoutException e) {
                    residentKib = ResidentMemory.kibibytes(process.pid());
                    if (residentKib > memoryLimitKib) {
                        stop = Stop.MEMORY;
                        break;
                    }
                    if (calls != null && !process.isAlive()) {
                        // the runner died (killed from outside) while a tool worked for it
                        calls.cancel();
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            kill();
            if (calls != null) {
                calls.cancel();
            }
            throw new CancellationException("interrupted while waiting for the code to finish");
        } catch (ExecutionException e) {
            kill();
            throw new SandboxUnavailableException("the output of Deno could not be read: " + e.getCause(), e.getCause());
        }
        Duration elapsed = Duration.ofNanos(System.nanoTime() - startNanos);
        int exitCode = -1;
        if (finished != null && finished.ending() == FrameReader.Ending.END_OF_STREAM) {
            exitCode = exitCodeAfterEndOfStream();
        }
        if (finished != null && finished.ending() == FrameReader.Ending.FRAME) {
            endInBackground();
        } else {
            kill();
        }
        if (finished == null) {
            boolean callCut = calls != null && calls.cancel();
            finished = outputAfterKill(outcome, reader, callCut);
        }
        String console = console(finished);
        if (stop == Stop.TIMEOUT) {
            return ExecutionResult.failure(new ExecutionError(ErrorType.TIMEOUT_ERROR,
                    "the code ran longer than its time limit of " + format(limits.timeout())), console, elapsed);
        }
        if (stop == Stop.MEMORY) {
            return ExecutionResult.failure(new ExecutionError(ErrorType.MEMORY_ERROR,
                    "the code used more memory than its limit of " + limits.memoryMb() + " MB (the process reached "
                            + residentKib / 1024 + " MB resident)"), withoutCrashReport(console), elapsed);
        }
        return fromOutcome(finished, source, limits, console, exitCode, elapsed)
                .withNondeterminism(nondeterminism(finished));
    }

    private static Set<String> nondeterminism(FrameReader.Outcome outcome) {
        Set<String> sources = new LinkedHashSet<>();
        for (String source : outcome.nondeterminism().split(",")) {
            if (!source.isBlank()) {
                sources.add(source);
            }
        }
        return sources;
    }

    private ExecutionResult fromOutcome(FrameReader.Outcome outcome, ModuleSource source, Limits limits,
            String console, int exitCode, Duration elapsed) {
        switch (outcome.ending()) {
            case OUTPUT_LIMIT:
                return ExecutionResult.failure(new ExecutionError(ErrorType.OUTPUT_LIMIT_ERROR,
                        "the console output went over its limit of " + limits.maxOutputBytes() + " bytes"),
                        console, elapsed);
            case RESULT_LIMIT:
                return ExecutionResult.failure(new ExecutionError(ErrorType.OUTPUT_LIMIT_ERROR,
                        "the result is over its limit of " + limits.maxResultBytes() + " bytes"), console, elapsed);
            case CORRUPT:
                return ExecutionResult.failure(new ExecutionError(ErrorType.RUNTIME_ERROR,
                        "the result could not be read: other output was written into it"), console, elapsed);
            case FRAME:
                String payload = new String(outcome.payload(), StandardCharsets.UTF_8);
                if (outcome.kind() == FrameReader.Kind.VALUE) {
                    if (!JsonSyntax.isValid(payload)) {
                        return ExecutionResult.failure(new ExecutionError(ErrorType.SERIALIZATION_ERROR,
                                "the result is not valid JSON"), console, elapsed);
                    }
                    return ExecutionResult.success(payload, console, elapsed);
                }
                try {
                    return ExecutionResult.failure(new ErrorFrames(source, runtime.hostPaths()).parse(payload),
                            console, elapsed);
                } catch (IllegalArgumentException e) {
                    return ExecutionResult.failure(new ExecutionError(ErrorType.RUNTIME_ERROR,
                            "the error of the code could not be read"), console, elapsed);
                }
            case END_OF_STREAM:
            default:
                if (exitCode == V8_FATAL_EXIT_CODE || OUT_OF_MEMORY_MARKERS.stream().anyMatch(console::contains)) {
                    return ExecutionResult.failure(new ExecutionError(ErrorType.MEMORY_ERROR,
                            "the code ran out of memory (V8's heap limit is " + limits.memoryMb() + " MB)"),
                            withoutCrashReport(console), elapsed);
                }
                if (!outcome.acknowledged()) {
                    throw new SandboxUnavailableException("Deno " + runtime.executable() + " exited with code "
                            + exitCode + " before it could run any code" + (console.isBlank() ? "" : ": " + console.strip())
                            + ". To fix: check that it is a working Deno 2 (`deno --version`), or let execache install"
                            + " its own by configuring no Deno path.");
                }
                return ExecutionResult.failure(new ExecutionError(ErrorType.RUNTIME_ERROR,
                        "the process ended (exit code " + exitCode + ") before the code returned a result"),
                        console, elapsed);
        }
    }

    private int exitCodeAfterEndOfStream() {
        try {
            if (process.waitFor(EXIT_WAIT_MILLIS, TimeUnit.MILLISECONDS)) {
                return process.exitValue();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return -1;
    }

    /**
     * The output of a run that was stopped. With a tool call cut off, the reader is still in that
     * call until it gives up; it is waited for only briefly, so a tool slow to give up does not
     * hold the run's answer back (the console is then what was read so far).
     */
    private static FrameReader.Outcome outputAfterKill(CompletableFuture<FrameReader.Outcome> outcome,
            FrameReader reader, boolean callCut) {
        try {
            return outcome.get(callCut ? CALL_CANCEL_WAIT_MILLIS : EXIT_WAIT_MILLIS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // nothing more can be read
        }
        return new FrameReader.Outcome(FrameReader.Ending.END_OF_STREAM, true, null, new byte[0], reader.consoleSoFar());
    }

    private String console(FrameReader.Outcome outcome) {
        return runtime.hostPaths().scrub(new String(outcome.console(), StandardCharsets.UTF_8));
    }

    /** V8's out-of-memory report (its last GCs and a native stack) says nothing about the code. */
    private static String withoutCrashReport(String console) {
        int cut = console.length();
        for (String start : CRASH_REPORT_STARTS) {
            int at = console.indexOf(start);
            if (at >= 0) {
                cut = Math.min(cut, at);
            }
        }
        return cut == console.length() ? console : console.substring(0, cut).stripTrailing();
    }

    /** Ends the process and anything it started, and waits until it is gone. */
    void kill() {
        if (process.isAlive()) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
        }
        signalKill();
        try {
            if (process.waitFor(REAP_WAIT_MILLIS, TimeUnit.MILLISECONDS)) {
                released();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Ends the process once its result is in, without waiting for the kernel to take it down,
     * which costs milliseconds for a process of Deno's size. It can run no more code; it is
     * reaped in the background. No scan for children either: Deno runs with --deny-run.
     */
    private void endInBackground() {
        signalKill();
        process.onExit().thenRun(this::released);
    }

    private void signalKill() {
        // through the handle: Process.destroyForcibly() would also close the pipes, and the
        // reader may still be taking the last output of a run that timed out
        process.toHandle().destroyForcibly();
    }

    private void released() {
        LiveProcesses.remove(process);
        closeQuietly(process.getOutputStream());
    }

    /**
     * @param workingDirectory where the runner moves before the code runs, when the code may
     *     read there; otherwise it stays in its neutral directory and is not told
     * @param tools each server's name and the names of its tools the code may call
     */
    private static byte[] payload(byte[] secret, ModuleSource source, ExecutionRequest request,
            Optional<String> workingDirectory, Map<String, List<String>> tools) {
        Map<String, Object> start = new TreeMap<>();
        start.put("context", request.context());
        start.put("maxResultBytes", request.limits().maxResultBytes());
        start.put("maxCallBytes", FrameReader.maxCallBytes(request.limits().maxResultBytes()));
        start.put("module", source.dataUrl());
        start.put("tools", tools);
        workingDirectory.ifPresent(path -> start.put("workingDirectory", path));
        String json = CanonicalJson.write(start, "start");
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        byte[] header = (body.length + "\n").getBytes(StandardCharsets.US_ASCII);
        byte[] payload = new byte[secret.length + header.length + body.length];
        System.arraycopy(secret, 0, payload, 0, secret.length);
        System.arraycopy(header, 0, payload, secret.length, header.length);
        System.arraycopy(body, 0, payload, secret.length + header.length, body.length);
        return payload;
    }

    private static byte[] randomBytes() {
        byte[] bytes = new byte[SECRET_LENGTH / 2];
        RANDOM.nextBytes(bytes);
        return bytes;
    }

    static String format(Duration duration) {
        long millis = duration.toMillis();
        if (millis % 1000 == 0) {
            return millis / 1000 + " s";
        }
        return millis + " ms";
    }

    private static void closeQuietly(AutoCloseable closeable) {
        try {
            closeable.close();
        } catch (Exception e) {
            // already closed or the process is gone
        }
    }

    private enum Stop {
        TIMEOUT,
        MEMORY
    }
}
