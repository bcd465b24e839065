package dev.execache.sandbox;

import dev.execache.core.spi.SandboxUnavailableException;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Finds a working Deno 2: the configured one, else {@code deno} on the PATH, else the pinned
 * version from the npm registry, installed into the cache directory on first use.
 */
final class DenoLocator {
    private static final System.Logger LOG = System.getLogger(DenoLocator.class.getName());
    private static final Pattern VERSION = Pattern.compile("deno (\\d+)\\.(\\d+)\\.(\\d+)");
    private static final long VERSION_CHECK_SECONDS = 60;
    private static final long INSTALL_MINUTES = 10;
    /** Concurrent installs within this JVM; other processes are kept out by the lock file. */
    private static final Object INSTALL_LOCK = new Object();

    private final DenoSandboxSettings settings;
    private final String pathVariable;

    DenoLocator(DenoSandboxSettings settings) {
        this(settings, System.getenv("PATH"));
    }

    DenoLocator(DenoSandboxSettings settings, String pathVariable) {
        this.settings = settings;
        this.pathVariable = pathVariable == null ? "" : pathVariable;
    }

    /** @throws SandboxUnavailableException when no Deno 2 can be found or installed */
    Path locate() {
        if (settings.denoExecutable() != null) {
            Path configured = settings.denoExecutable();
            String problem = problemWith(configured);
            if (problem != null) {
                throw unavailable("the configured Deno " + configured + " " + problem,
                        "fix or remove the configured Deno path");
            }
            return configured;
        }
        List<String> tried = new ArrayList<>();
        Optional<Path> onPath = findOnPath(tried);
        if (onPath.isPresent()) {
            return onPath.get();
        }
        return installed(tried);
    }

    /** Where the pinned Deno is installed from the npm registry. */
    Path installDirectory() {
        return settings.cacheDirectory().resolve("deno-" + DenoSandboxSettings.DENO_VERSION);
    }

    private Optional<Path> findOnPath(List<String> tried) {
        String name = DenoSandboxSettings.isWindows() ? "deno.exe" : "deno";
        for (String entry : pathVariable.split(File.pathSeparator)) {
            if (entry.isBlank()) {
                continue;
            }
            Path candidate = Path.of(entry, name).toAbsolutePath();
            if (!Files.isRegularFile(candidate)) {
                continue;
            }
            String problem = problemWith(candidate);
            if (problem == null) {
                return Optional.of(candidate);
            }
            tried.add(candidate + " on the PATH " + problem);
        }
        return Optional.empty();
    }

    private Path installed(List<String> tried) {
        Path target = installDirectory();
        Optional<Path> existing = usableBinary(target);
        if (existing.isPresent()) {
            return existing.get();
        }
        synchronized (INSTALL_LOCK) {
            try {
                Files.createDirectories(settings.cacheDirectory());
                Path lockFile = settings.cacheDirectory().resolve(target.getFileName() + ".lock");
                try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
                    FileLock lock = channel.lock();
                    try {
                        existing = usableBinary(target);
                        if (existing.isPresent()) {
                            return existing.get();
                        }
                        return install(target, tried);
                    } finally {
                        lock.release();
                    }
                }
            } catch (IOException e) {
                tried.add("installing Deno " + DenoSandboxSettings.DENO_VERSION + " into " + target
                        + " failed: " + e.getMessage());
                throw unavailable(String.join("; ", tried), null);
            }
        }
    }

    private Path install(Path target, List<String> tried) throws IOException {
        Path staging = target.resolveSibling(target.getFileName() + ".tmp-" + UUID.randomUUID());
        try {
            Files.createDirectories(staging);
            List<String> command = List.of(settings.npmCommand(), "install",
                    "--no-save", "--no-package-lock", "--ignore-scripts", "--include=optional",
                    "--no-audit", "--no-fund", "--loglevel=error",
                    "--prefix", staging.toString(), "deno@" + DenoSandboxSettings.DENO_VERSION);
            // Said before and after: a first run waits on this for seconds, and a person (or an MCP
            // host's log) should see why.
            LOG.log(System.Logger.Level.INFO, "installing Deno " + DenoSandboxSettings.DENO_VERSION
                    + " from the npm registry into " + target + " (once, on first use)...");
            long started = System.nanoTime();
            String failure = runNpm(command, staging);
            if (failure != null) {
                tried.add("installing Deno " + DenoSandboxSettings.DENO_VERSION + " with npm failed: " + failure);
                throw unavailable(String.join("; ", tried), null);
            }
            Optional<Path> staged = binaryIn(staging);
            if (staged.isEmpty()) {
                tried.add("npm installed the deno package but no Deno binary for this platform ("
                        + System.getProperty("os.name") + " " + System.getProperty("os.arch") + ")");
                throw unavailable(String.join("; ", tried), null);
            }
            String problem = problemWith(staged.get());
            if (problem != null) {
                tried.add("the Deno installed from npm " + problem);
                throw unavailable(String.join("; ", tried), null);
            }
            if (Files.exists(target)) {
                deleteTree(target);
            }
            Files.move(staging, target, StandardCopyOption.ATOMIC_MOVE);
            LOG.log(System.Logger.Level.INFO, "installed Deno " + DenoSandboxSettings.DENO_VERSION + " in "
                    + TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started) + " s");
            return binaryIn(target).orElseThrow(() -> new IOException("Deno vanished from " + target));
        } finally {
            if (Files.exists(staging)) {
                deleteTree(staging);
            }
        }
    }

    private String runNpm(List<String> command, Path workingDirectory) {
        try {
            Process npm = new ProcessBuilder(command)
                    .directory(workingDirectory.toFile())
                    .redirectErrorStream(true)
                    .redirectInput(ProcessBuilder.Redirect.from(nullDevice()))
                    .start();
            npm.getOutputStream().close();
            ByteArrayOutputStream output = new ByteArrayOutputStream();
            Thread drain = new Thread(() -> copyBounded(npm.getInputStream(), output, 64 * 1024),
                    "execache-npm-output");
            drain.setDaemon(true);
            drain.start();
            if (!npm.waitFor(INSTALL_MINUTES, TimeUnit.MINUTES)) {
                npm.destroyForcibly();
                return "npm did not finish within " + INSTALL_MINUTES + " minutes";
            }
            drain.join(TimeUnit.SECONDS.toMillis(5));
            if (npm.exitValue() != 0) {
                String text;
                synchronized (output) {
                    text = output.toString(StandardCharsets.UTF_8).strip();
                }
                return "`" + String.join(" ", command) + "` exited with " + npm.exitValue()
                        + (text.isEmpty() ? "" : ": " + lastLines(text, 10));
            }
            return null;
        } catch (IOException e) {
            return "npm could not be started (" + e.getMessage() + "); is Node.js with npm installed?";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted while npm was installing Deno";
        }
    }

    private static Optional<Path> usableBinary(Path installDirectory) {
        Optional<Path> binary = binaryIn(installDirectory);
        return binary.filter(path -> Files.isExecutable(path));
    }

    /** The npm package ships its binary in one optional package per platform: @deno/linux-x64-glibc and so on. */
    private static Optional<Path> binaryIn(Path installDirectory) {
        Path scope = installDirectory.resolve("node_modules").resolve("@deno");
        if (!Files.isDirectory(scope)) {
            return Optional.empty();
        }
        String name = DenoSandboxSettings.isWindows() ? "deno.exe" : "deno";
        try (DirectoryStream<Path> platforms = Files.newDirectoryStream(scope)) {
            for (Path platform : platforms) {
                Path candidate = platform.resolve(name);
                if (Files.isRegularFile(candidate)) {
                    return Optional.of(candidate);
                }
            }
        } catch (IOException e) {
            return Optional.empty();
        }
        return Optional.empty();
    }

    /** Null when the file is a working Deno 2, else what is wrong with it. */
    static String problemWith(Path executable) {
        if (!Files.isRegularFile(executable)) {
            return "does not exist";
        }
        if (!Files.isExecutable(executable)) {
            return "is not executable";
        }
        try {
            Process process = new ProcessBuilder(executable.toString(), "--version")
                    .redirectErrorStream(true)
                    .redirectInput(ProcessBuilder.Redirect.from(nullDevice()))
                    .start();
            ByteArrayOutputStream output = new ByteArrayOutputStream();
            Thread drain = new Thread(() -> copyBounded(process.getInputStream(), output, 16 * 1024),
                    "execache-deno-version");
            drain.setDaemon(true);
            drain.start();
            if (!process.waitFor(VERSION_CHECK_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                return "did not answer `--version` within " + VERSION_CHECK_SECONDS + " s";
            }
            drain.join(TimeUnit.SECONDS.toMillis(5));
            String text;
            synchronized (output) {
                text = output.toString(StandardCharsets.UTF_8).strip();
            }
            if (process.exitValue() != 0) {
                return "failed on `--version` (exit code " + process.exitValue() + ")"
                        + (text.isEmpty() ? "" : ": " + lastLines(text, 3));
            }
            Matcher version = VERSION.matcher(text);
            if (!version.find()) {
                return "is not Deno (`--version` printed: " + lastLines(text, 1) + ")";
            }
            if (!version.group(1).equals("2")) {
                return "is Deno " + version.group(1) + "." + version.group(2) + "." + version.group(3)
                        + ", and execache needs Deno 2";
            }
            return null;
        } catch (IOException e) {
            return "cannot be run: " + e.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "was not checked: interrupted";
        }
    }

    private SandboxUnavailableException unavailable(String what, String fix) {
        String howToFix = fix != null ? fix
                : "install Node.js with npm so that execache can install Deno " + DenoSandboxSettings.DENO_VERSION
                        + " itself into " + installDirectory() + ", or install Deno 2 and put `deno` on the PATH,"
                        + " or configure the path of a Deno 2 executable";
        return new SandboxUnavailableException("Deno cannot be used to run code: " + what + ". To fix: " + howToFix + ".");
    }

    private static void copyBounded(InputStream in, ByteArrayOutputStream out, int bound) {
        byte[] buffer = new byte[8192];
        try (in) {
            int n;
            while ((n = in.read(buffer)) >= 0) {
                synchronized (out) {
                    int room = bound - out.size();
                    if (room > 0) {
                        out.write(buffer, 0, Math.min(room, n));
                    }
                }
            }
        } catch (IOException e) {
            // the process is gone; what was read so far is all there is
        }
    }

    private static String lastLines(String text, int count) {
        String[] lines = text.split("\\R");
        int from = Math.max(0, lines.length - count);
        return String.join(" | ", Arrays.copyOfRange(lines, from, lines.length));
    }

    private static File nullDevice() {
        return new File(DenoSandboxSettings.isWindows() ? "NUL" : "/dev/null");
    }

    static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> {
                try {
                    Files.deleteIfExists(path);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }
}
