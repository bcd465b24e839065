package dev.execache.sandbox;

import dev.execache.core.spi.SandboxUnavailableException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A located Deno with what every run needs beside it: the runner script (as a data: URL, so
 * that no path of ours shows in what the code sees: Deno.mainModule, stack traces) and a Deno
 * cache directory of ours.
 *
 * @param launcher the command that starts Deno (see {@link #launcher})
 * @param runnerModule the runner script as a data: URL
 */
record DenoRuntime(Path executable, List<String> launcher, String runnerModule, Path denoDirectory, HostPaths hostPaths) {

    private static final String RUNNER_RESOURCE = "runner.js";
    private static final String DENO = "deno";
    private static final String PATH_IS = "PATH=";
    private static final String RUNNER_MEDIA_TYPE = "data:text/javascript;base64,";
    /** Deno shortens long data: URLs in stack traces, keeping their start. */
    private static final int RUNNER_URL_PREFIX = RUNNER_MEDIA_TYPE.length() + 16;

    /**
     * Deno keeps per-module analysis in SQLite files under DENO_DIR, keyed by module URL, and the
     * code's URL is a data: URL holding the code: every distinct run would add a row that is
     * never read again. A directory where the database file would go makes Deno fall back to an
     * in-memory cache. The same for location_data, where localStorage and the Cache API would
     * otherwise keep state from one run to the next: a plain file there makes them fail.
     */
    private static final List<String> BLOCKED_DATABASES = List.of("dep_analysis_cache_v2", "node_analysis_cache_v2");
    private static final String BLOCKED_LOCATION_DATA = "location_data";

    static DenoRuntime prepare(Path executable, Path cacheDirectory) {
        try {
            String runner = RUNNER_MEDIA_TYPE + Base64.getEncoder().encodeToString(runnerScript());
            Path denoDirectory = prepareDenoDirectory(cacheDirectory.resolve("deno-dir"));
            Map<String, String> paths = new LinkedHashMap<>();
            paths.put(executable.toString(), "<deno>");
            Path installRoot = executable.getParent();
            while (installRoot != null && installRoot.startsWith(cacheDirectory) && !installRoot.equals(cacheDirectory)) {
                paths.put(installRoot.toString(), "<deno-install>");
                installRoot = installRoot.getParent();
            }
            paths.put(cacheDirectory.toUri().toString(), "<execache-cache>/");
            paths.put(cacheDirectory.toString(), "<execache-cache>");
            String home = System.getProperty("user.home", "");
            if (home.length() > 1) {
                paths.put(home, "~");
            }
            return new DenoRuntime(executable, launcher(executable, cacheDirectory), runner, denoDirectory,
                    new HostPaths(paths));
        } catch (IOException e) {
            throw new SandboxUnavailableException("the sandbox cannot prepare its files under " + cacheDirectory
                    + ": " + e + ". To fix: make that directory writable or configure another cache directory"
                    + " (DenoSandboxSettings.cacheDirectory).", e);
        }
    }

    /**
     * Deno takes node:process's argv0 from its own argv[0], which Java sets to the path it
     * starts: env, which finds {@code deno} on a PATH of ours, starts it as plain "deno".
     */
    private static List<String> launcher(Path executable, Path cacheDirectory) throws IOException {
        Path env = Path.of("/usr/bin/env");
        if (DenoSandboxSettings.isWindows() || !Files.isExecutable(env)) {
            return List.of(executable.toString());
        }
        Path directory = executable.getParent();
        if (!executable.getFileName().toString().equals(DENO)) {
            directory = Files.createDirectories(cacheDirectory.resolve("deno-bin"));
            Path link = directory.resolve(DENO);
            if (!Files.isSymbolicLink(link) || !Files.readSymbolicLink(link).equals(executable)) {
                Files.deleteIfExists(link);
                try {
                    Files.createSymbolicLink(link, executable);
                } catch (FileAlreadyExistsException e) {
                    // another sandbox made it at the same moment, to the same Deno
                }
            }
        }
        if (directory.toString().indexOf(':') >= 0) {
            return List.of(executable.toString());
        }
        return List.of(env.toString(), PATH_IS + directory, DENO);
    }

    /**
     * The command that starts Deno behind {@code wrapper}, a program that starts the rest of its
     * arguments itself (setpriv, which finds a program by name on its own PATH): where the
     * launcher is env finding {@code deno} on a PATH of ours, that PATH goes into
     * {@code environment} and the wrapper finds deno itself, one program fewer to start (about
     * 0.7 ms of each cold start, #29).
     */
    List<String> launcherBehind(List<String> wrapper, Map<String, String> environment) {
        List<String> command = new ArrayList<>(wrapper);
        if (!wrapper.isEmpty() && launcher.size() == 3 && launcher.get(1).startsWith(PATH_IS)) {
            environment.put("PATH", launcher.get(1).substring(PATH_IS.length()));
            command.add(DENO);
        } else {
            command.addAll(launcher);
        }
        return command;
    }

    /** The start of the runner's URL, as it shows in a stack trace shortened or not. */
    String runnerUrlPrefix() {
        return runnerModule.substring(0, Math.min(runnerModule.length(), RUNNER_URL_PREFIX));
    }

    static byte[] runnerScript() throws IOException {
        try (InputStream in = DenoRuntime.class.getResourceAsStream(RUNNER_RESOURCE)) {
            if (in == null) {
                throw new IOException("the runner script " + RUNNER_RESOURCE + " is missing from the jar");
            }
            return in.readAllBytes();
        }
    }

    private static Path prepareDenoDirectory(Path directory) throws IOException {
        Files.createDirectories(directory);
        for (String database : BLOCKED_DATABASES) {
            Path blocker = directory.resolve(database);
            if (!Files.isDirectory(blocker)) {
                Files.deleteIfExists(blocker);
                Files.createDirectories(blocker);
            }
        }
        Path locationData = directory.resolve(BLOCKED_LOCATION_DATA);
        if (!Files.isRegularFile(locationData)) {
            DenoLocator.deleteTree(locationData);
            try {
                Files.createFile(locationData);
            } catch (FileAlreadyExistsException e) {
                // another process made it first
            }
        }
        return directory;
    }

}
