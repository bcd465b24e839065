package dev.execache.tools.mcp;

import dev.execache.core.spi.ParentDeathSignal;
import java.io.File;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Starts the command servers so that none outlives execache, however it ends, whether or not the
 * server ever answered. A server that answered exits when its stdin closes; one that never reads
 * it (a hung start, {@code node -e "setInterval(() => {}, 1000)"}) would not. So on Linux the
 * kernel ends it: util-linux's {@code setpriv --pdeathsig KILL} sets PR_SET_PDEATHSIG and then
 * execs the command (the pid stays the server's), as the sandbox does for its Deno runners
 * (both through core's {@link ParentDeathSignal}). Where
 * setpriv is absent (not Linux, a minimal image), a shutdown hook ends every server on a normal
 * exit or SIGTERM; after a SIGKILL only the servers that read their stdin end.
 */
final class ServerProcesses {
    /**
     * The signal follows the thread that started the process, not the JVM: every server is
     * started by this one thread, which lives as long as the JVM (a pooled thread that ended
     * after a minute idle would take its servers with it).
     */
    private static final ExecutorService STARTER = Executors.newSingleThreadExecutor(runnable -> {
        Thread thread = new Thread(runnable, "execache-mcp-starter");
        thread.setDaemon(true);
        return thread;
    });
    private static final List<String> DIES_WITH_EXECACHE = ParentDeathSignal.commandPrefix();
    private static final long EXIT_WAIT_MILLIS = 1_000;
    private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();
    /** Set once the JVM exits: a server started after that is ended at once. */
    private static volatile boolean exiting;

    static {
        try {
            Runtime.getRuntime().addShutdownHook(new Thread(ServerProcesses::endAll, "execache-mcp-shutdown"));
        } catch (IllegalStateException e) {
            exiting = true;
        }
    }

    private ServerProcesses() {
    }

    /**
     * Starts the command as {@code builder} says, behind setpriv where there is one and the
     * command names a program that exists: otherwise it is started directly, so that a command
     * that cannot run fails with the operating system's own error.
     */
    static Process start(ProcessBuilder builder) throws IOException {
        List<String> command = List.copyOf(builder.command());
        if (!DIES_WITH_EXECACHE.isEmpty() && executable(command.get(0), builder.environment(), builder.directory())) {
            List<String> wrapped = new ArrayList<>(DIES_WITH_EXECACHE);
            wrapped.addAll(command);
            builder.command(wrapped);
        }
        Process process;
        Future<Process> starting = STARTER.submit(builder::start);
        try {
            process = starting.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            // the start goes on without its caller (a catalog closed while its server starts): what it starts is
            // ended once it has started, not left running for nobody; the next task of the one thread it starts on
            STARTER.execute(() -> {
                try {
                    Process orphan = starting.get();
                    orphan.descendants().forEach(ProcessHandle::destroyForcibly);
                    orphan.destroyForcibly();
                } catch (InterruptedException | ExecutionException | RuntimeException ignored) {
                    // it did not start
                }
            });
            throw new InterruptedIOException("interrupted while starting " + command.get(0));
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            throw new IllegalStateException(e.getCause());
        }
        LIVE.add(process);
        process.onExit().thenRun(() -> LIVE.remove(process));
        if (exiting) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
        }
        return process;
    }

    /** Whether exec would find a program to run for {@code command}: a path, or a name on the PATH it is given. */
    static boolean executable(String command, Map<String, String> environment, File directory) {
        Path base = directory == null ? Path.of("").toAbsolutePath() : directory.toPath();
        if (command.contains("/")) {
            Path file = base.resolve(command);
            return Files.isRegularFile(file) && Files.isExecutable(file);
        }
        String path = environment.get("PATH");
        if (path == null) {
            return false;
        }
        for (String dir : path.split(":", -1)) {
            Path file = base.resolve(dir.isEmpty() ? "." : dir).resolve(command);
            if (Files.isRegularFile(file) && Files.isExecutable(file)) {
                return true;
            }
        }
        return false;
    }

    /** Whether servers are started so that the kernel ends them with execache (setpriv found). */
    static boolean diesWithExecacheOnAnyExit() {
        return !DIES_WITH_EXECACHE.isEmpty();
    }

    /** At exit: stdin closed (the spec's shutdown signal), then SIGTERM, then SIGKILL, each after a short wait. */
    private static void endAll() {
        exiting = true;
        List<Process> live = List.copyOf(LIVE);
        List<ProcessHandle> children = live.stream().flatMap(Process::descendants).toList();
        for (Process process : live) {
            try {
                process.getOutputStream().close();
            } catch (IOException e) {
                // already gone
            }
        }
        awaitExit(live);
        live.forEach(Process::destroy);
        awaitExit(live);
        live.forEach(Process::destroyForcibly);
        children.forEach(ProcessHandle::destroyForcibly);
    }

    private static void awaitExit(List<Process> processes) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(EXIT_WAIT_MILLIS);
        for (Process process : processes) {
            try {
                process.waitFor(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
