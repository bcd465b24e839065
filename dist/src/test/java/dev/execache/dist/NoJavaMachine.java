package dev.execache.dist;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A machine as a person without Java has it: a PATH holding every command of /usr/bin except the
 * JDK's (java, javac, jlink, ... and whatever links into a JVM directory), no JAVA_HOME, a HOME and
 * XDG folders of its own (no Maven repository in reach), a working directory outside the sources.
 */
final class NoJavaMachine {
    private static final Path SYSTEM_COMMANDS = Path.of("/usr/bin");

    final Path root;
    final Path bin;
    final Path home;
    final Path work;

    private NoJavaMachine(Path root) throws IOException {
        this.root = root;
        this.bin = Files.createDirectories(root.resolve("bin"));
        this.home = Files.createDirectories(root.resolve("home"));
        this.work = Files.createDirectories(root.resolve("work"));
    }

    /** Without Deno too, unless a test links one onto its PATH. */
    static NoJavaMachine in(Path root) throws IOException {
        return in(root, Set.of());
    }

    /** As {@link #in(Path)}, without these commands either (node and npm, say). */
    static NoJavaMachine in(Path root, Set<String> missing) throws IOException {
        NoJavaMachine machine = new NoJavaMachine(root);
        try (Stream<Path> commands = Files.list(SYSTEM_COMMANDS)) {
            for (Path command : (Iterable<Path>) commands::iterator) {
                String name = command.getFileName().toString();
                if (!isJava(command) && !name.equals("deno") && !missing.contains(name)) {
                    Files.createSymbolicLink(machine.bin.resolve(command.getFileName()), command);
                }
            }
        }
        Result java = machine.run(machine.work, List.of("bash", "-c", "command -v java || echo none"));
        assertThat(java.stdout().strip()).as("java on the PATH of a machine without Java").isEqualTo("none");
        return machine;
    }

    private static boolean isJava(Path command) {
        try {
            Path real = command.toRealPath();
            return real.toString().contains("/jvm/") || real.toString().contains("/java-")
                    || command.getFileName().toString().startsWith("java");
        } catch (IOException e) {
            return true;
        }
    }

    void linkOntoPath(Path executable) throws IOException {
        Files.createSymbolicLink(bin.resolve(executable.getFileName()), executable);
    }

    Map<String, String> environment() {
        Map<String, String> env = new HashMap<>();
        env.put("PATH", bin.toString());
        env.put("HOME", home.toString());
        env.put("XDG_CACHE_HOME", root.resolve("cache").toString());
        env.put("XDG_CONFIG_HOME", root.resolve("config").toString());
        env.put("LANG", "C.UTF-8");
        // npm's download cache: the deno package is fetched from the registry once, not on every build
        env.put("npm_config_cache", Path.of(System.getProperty("user.home"), ".npm").toString());
        env.put("npm_config_update_notifier", "false");
        return env;
    }

    Result run(Path directory, List<String> command) {
        return run(directory, command, Map.of());
    }

    Result run(Path directory, List<String> command, Map<String, String> extraEnvironment) {
        try {
            Path out = Files.createTempFile(root, "stdout", ".txt");
            Path err = Files.createTempFile(root, "stderr", ".txt");
            ProcessBuilder builder = new ProcessBuilder(command).directory(directory.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .redirectOutput(out.toFile()).redirectError(err.toFile());
            builder.environment().clear();
            builder.environment().putAll(environment());
            builder.environment().putAll(extraEnvironment);
            // a command found on this machine's PATH, as a shell there would find it
            List<String> resolved = new ArrayList<>(command);
            if (!resolved.get(0).contains("/")) {
                resolved.set(0, bin.resolve(resolved.get(0)).toString());
            }
            builder.command(resolved);
            Process process = builder.start();
            // bounded generously: a first run installs nothing, but CI machines are slow and busy
            if (!process.waitFor(10, TimeUnit.MINUTES)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
                throw new AssertionError(String.join(" ", command) + " did not finish in 10 minutes; stderr: "
                        + Files.readString(err, StandardCharsets.UTF_8));
            }
            return new Result(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                    Files.readString(err, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    record Result(int exitCode, String stdout, String stderr) {
        Result succeeded() {
            assertThat(exitCode).as("exit code; stdout: %s; stderr: %s", stdout, stderr).isZero();
            return this;
        }
    }
}
