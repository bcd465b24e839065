package dev.execache.cli;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs the packaged {@code execache} through its launcher script, as a separate process, as a
 * person at a terminal would.
 */
final class CliProcess {
    /**
     * The runtime directory of the resident server the commands go through, or null: each command
     * runs in a process of its own ({@code EXECACHE_NO_DAEMON=1}). Set per test class.
     */
    private static volatile Path serverRuntime;

    private final Path workingDir;
    private final Map<String, String> env = new HashMap<>();
    private Path launcher = launcher();
    private boolean minimal;

    CliProcess(Path workingDir) {
        this.workingDir = workingDir;
    }

    /** Commands from now on go through the resident server of this runtime directory (null: in-process). */
    static void throughServer(Path runtime) {
        serverRuntime = runtime;
    }

    /** Which way commands run, for test names and messages. */
    static String mode() {
        return serverRuntime == null ? "in-process" : "through the resident server";
    }

    /** The launcher script at the root of the checkout, which runs the packaged jar. */
    static Path launcher() {
        String launcher = System.getProperty("execache.launcher");
        if (launcher == null || !Files.isExecutable(Path.of(launcher))) {
            throw new IllegalStateException("system property execache.launcher must name the launcher script (run with failsafe)");
        }
        return Path.of(launcher);
    }

    /** Runs the launcher through this path instead (a symbolic link to it, say). */
    CliProcess through(Path path) {
        this.launcher = path;
        return this;
    }

    /**
     * Starts from an empty environment, as {@code env -i} does, with only HOME, PATH=/usr/bin:/bin,
     * JAVA_HOME and what {@link #env} adds, as a GUI agent host may start a server.
     */
    CliProcess minimalEnvironment(Path home) {
        this.minimal = true;
        env.put("HOME", home.toString());
        env.put("PATH", "/usr/bin:/bin");
        env.put("JAVA_HOME", System.getProperty("java.home"));
        return this;
    }

    /** The Deno the tests use (as the launcher would find it for the user running the build). */
    static Path deno() throws IOException {
        String home = System.getProperty("user.home");
        String xdg = System.getenv("XDG_CACHE_HOME");
        Path cache = (xdg == null || xdg.isBlank() ? Path.of(home, ".cache") : Path.of(xdg)).resolve("execache");
        try (var found = Files.find(cache, 6, (path, attributes) -> path.getFileName().toString().equals("deno")
                && attributes.isRegularFile())) {
            return found.findFirst().orElseThrow(() -> new IllegalStateException("no Deno under " + cache));
        }
    }

    CliProcess env(String name, String value) {
        env.put(name, value);
        return this;
    }

    static Path jar() {
        String jar = System.getProperty("execache.jar");
        if (jar == null || !Files.isRegularFile(Path.of(jar))) {
            throw new IllegalStateException("system property execache.jar must name the packaged jar (run with failsafe)");
        }
        return Path.of(jar);
    }

    Result run(String... args) throws IOException, InterruptedException {
        return runWithInput((byte[]) null, args);
    }

    Result runWithInput(String stdin, String... args) throws IOException, InterruptedException {
        return runWithInput(stdin == null ? null : stdin.getBytes(StandardCharsets.UTF_8), args);
    }

    Result runWithInput(byte[] stdin, String... args) throws IOException, InterruptedException {
        return startWithInput(stdin, args).finish();
    }

    private Started startWithInput(byte[] stdin, String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(launcher.toString()));
        command.addAll(List.of(args));
        Path out = Files.createTempFile(workingDir, "stdout", ".txt");
        Path err = Files.createTempFile(workingDir, "stderr", ".txt");
        ProcessBuilder builder = new ProcessBuilder(command).directory(workingDir.toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile());
        if (minimal) {
            builder.environment().clear();
        }
        builder.environment().remove("EXECACHE_STORE");
        builder.environment().remove("EXECACHE_NO_CACHE");
        builder.environment().remove("EXECACHE_CONFIG");
        builder.environment().remove("EXECACHE_SIGNING_KEY");
        builder.environment().remove("EXECACHE_SIGNING_KEY_OLD");
        builder.environment().remove("EXECACHE_SIGNING_KEY_FILE");
        if (!minimal) {
            builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        }
        Path runtime = serverRuntime;
        if (runtime == null) {
            builder.environment().put("EXECACHE_NO_DAEMON", "1");
        } else {
            builder.environment().remove("EXECACHE_NO_DAEMON");
            builder.environment().put("XDG_RUNTIME_DIR", runtime.toString());
            builder.environment().put("EXECACHE_SERVER_IDLE", "5m");
        }
        builder.environment().putAll(env);
        if (stdin == null) {
            builder.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        }
        Process process = builder.start();
        if (stdin != null) {
            try (var in = process.getOutputStream()) {
                in.write(stdin);
            }
        }
        return new Started(process, out, err, String.join(" ", args));
    }

    /** Starts a command and returns at once; {@link Started#finish()} waits for it. */
    Started start(String... args) throws IOException {
        return startWithInput(null, args);
    }

    /** A command that is running. */
    record Started(Process process, Path out, Path err, String command) {
        Result finish() throws IOException, InterruptedException {
            if (!process.waitFor(2, TimeUnit.MINUTES)) {
                process.destroyForcibly();
                throw new AssertionError("execache " + command + " did not finish in 2 minutes");
            }
            Result result = new Result(process.exitValue(), Files.readString(out), Files.readString(err));
            Files.delete(out);
            Files.delete(err);
            return result;
        }
    }

    record Result(int exitCode, String stdout, String stderr) {
        @Override
        public String toString() {
            return "exit " + exitCode + "\n--- stdout ---\n" + stdout + "--- stderr ---\n" + stderr;
        }
    }
}
