package dev.execache.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Runs the packaged {@code execache} jar as a separate process, as a person at a terminal would. */
final class CliProcess {
    private final Path workingDir;
    private final Map<String, String> env = new HashMap<>();

    CliProcess(Path workingDir) {
        this.workingDir = workingDir;
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
        return runWithInput(null, args);
    }

    Result runWithInput(String stdin, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-jar", jar().toString()));
        command.addAll(List.of(args));
        Path out = Files.createTempFile(workingDir, "stdout", ".txt");
        Path err = Files.createTempFile(workingDir, "stderr", ".txt");
        ProcessBuilder builder = new ProcessBuilder(command).directory(workingDir.toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile());
        builder.environment().remove("EXECACHE_STORE");
        builder.environment().remove("EXECACHE_NO_CACHE");
        builder.environment().putAll(env);
        if (stdin == null) {
            builder.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        }
        Process process = builder.start();
        if (stdin != null) {
            try (var in = process.getOutputStream()) {
                in.write(stdin.getBytes(StandardCharsets.UTF_8));
            }
        }
        if (!process.waitFor(2, TimeUnit.MINUTES)) {
            process.destroyForcibly();
            throw new AssertionError("execache " + String.join(" ", args) + " did not finish in 2 minutes");
        }
        Result result = new Result(process.exitValue(), Files.readString(out), Files.readString(err));
        Files.delete(out);
        Files.delete(err);
        return result;
    }

    record Result(int exitCode, String stdout, String stderr) {
        @Override
        public String toString() {
            return "exit " + exitCode + "\n--- stdout ---\n" + stdout + "--- stderr ---\n" + stderr;
        }
    }
}
