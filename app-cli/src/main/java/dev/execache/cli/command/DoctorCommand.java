package dev.execache.cli.command;

import dev.execache.cli.output.Entries;
import dev.execache.cli.settings.Environment;
import dev.execache.cli.settings.Redaction;
import dev.execache.cli.settings.Settings;
import dev.execache.cli.settings.UsageException;
import dev.execache.cli.session.SignInServers;
import dev.execache.sandbox.DenoSandboxSettings;
import dev.execache.store.redis.RedisCacheStore;
import dev.execache.store.redis.RedisStoreSettings;
import jakarta.inject.Inject;
import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

@Command(name = "doctor", mixinStandardHelpOptions = true,
        description = {"Checks what execache needs: Java, Deno (or npm to install it), the config and the store;"
                + " says how to fix each problem. Changes nothing.",
            "Exit code 0 when every check passed, 1 when one failed."})
final class DoctorCommand implements Callable<Integer> {
    private static final long COMMAND_SECONDS = 20;

    private final Environment environment;
    private final Clock clock;

    @Spec
    CommandSpec spec;

    @Mixin
    CacheOptions cache = new CacheOptions();

    @Inject
    DoctorCommand(Environment environment, Clock clock) {
        this.environment = environment;
        this.clock = clock;
    }

    private record Check(boolean ok, String name, String finding, String fix) {
    }

    @Override
    public Integer call() {
        List<Check> checks = new ArrayList<>();
        checks.add(java());
        Settings settings = null;
        try {
            settings = Settings.resolve(cache.flags(), environment);
            checks.add(new Check(true, "config", settings.configPath() == null
                    ? settings.sources().get("config")
                    : settings.configPath() + " (" + settings.sources().get("config") + ")", null));
        } catch (UsageException e) {
            checks.add(new Check(false, "config", e.getMessage(), "correct the file or setting named above"));
        }
        Path cacheDirectory = settings != null ? settings.cacheDirectory() : Settings.cacheDirectory(environment.variables());
        Path denoSetting = settings != null ? settings.denoPath() : null;
        checks.addAll(deno(denoSetting, cacheDirectory));
        if (settings != null) {
            checks.add(store(settings));
            SignInServers.states(settings, environment).forEach((server, state) ->
                    checks.add(new Check(true, "sign-in", "server " + server + ": " + state, null)));
        }
        checks.add(new Check(true, "logs", "the stderr of the servers a run starts: "
                + Settings.serverLog(environment.variables()) + " (execache run --server-logs shows it instead)", null));
        PrintWriter out = spec.commandLine().getOut();
        boolean allOk = true;
        for (Check check : checks) {
            out.printf(Locale.ROOT, "%-4s %-7s %s%n", check.ok() ? "ok" : "FAIL", check.name(), check.finding());
            if (!check.ok()) {
                allOk = false;
                out.printf(Locale.ROOT, "%-12s fix: %s%n", "", check.fix());
            }
        }
        out.flush();
        return allOk ? ExitCode.OK : ExitCode.CODE_FAILED;
    }

    private Check java() {
        String home = System.getProperty("java.home");
        String version = Runtime.version().toString();
        String javaHome = environment.variables().get("JAVA_HOME");
        String finding = "Java " + version + " at " + home + (javaHome == null ? "" : " (JAVA_HOME " + javaHome + ")");
        return Runtime.version().feature() >= 17 ? new Check(true, "java", finding, null)
                : new Check(false, "java", finding, "install a JDK 17 or newer and set JAVA_HOME to it");
    }

    private List<Check> deno(Path configured, Path cacheDirectory) {
        List<Check> checks = new ArrayList<>();
        if (configured != null) {
            Optional<String> version = versionOf(configured.toString(), "--version");
            checks.add(version.filter(v -> v.startsWith("deno 2.")).isPresent()
                    ? new Check(true, "deno", version.get() + " at " + configured + " (EXECACHE_DENO)", null)
                    : new Check(false, "deno", "EXECACHE_DENO=" + configured + " is not a working Deno 2"
                            + version.map(v -> " (" + v + ")").orElse(""),
                            "point EXECACHE_DENO at a Deno 2 executable, or unset it to let execache find or install one"));
            return checks;
        }
        Optional<Path> onPath = onPath("deno");
        if (onPath.isPresent()) {
            Optional<String> version = versionOf(onPath.get().toString(), "--version");
            if (version.filter(v -> v.startsWith("deno 2.")).isPresent()) {
                checks.add(new Check(true, "deno", version.get() + " at " + onPath.get() + " (on the PATH)", null));
                return checks;
            }
        }
        Path installed = cacheDirectory.resolve("deno-" + DenoSandboxSettings.DENO_VERSION);
        if (Files.isDirectory(installed)) {
            checks.add(new Check(true, "deno", "Deno " + DenoSandboxSettings.DENO_VERSION + " installed in " + installed,
                    null));
            return checks;
        }
        Optional<Path> npm = onPath("npm");
        Optional<String> npmVersion = npm.flatMap(path -> versionOf(path.toString(), "--version"));
        if (npmVersion.isPresent()) {
            checks.add(new Check(true, "deno", "not installed yet: the first run installs Deno "
                    + DenoSandboxSettings.DENO_VERSION + " into " + installed + " with npm", null));
            checks.add(new Check(true, "npm", "npm " + npmVersion.get() + " at " + npm.get(), null));
        } else {
            checks.add(new Check(false, "deno", "no Deno 2 on the PATH, none installed in " + installed
                    + ", and no npm to install it with",
                    "install Node.js with npm (execache then installs Deno itself), or install Deno 2 and put deno on "
                            + "the PATH, or set EXECACHE_DENO=/path/to/deno"));
        }
        return checks;
    }

    private Check store(Settings settings) {
        return switch (settings.store()) {
            case MEMORY -> new Check(true, "store", "memory (nothing is kept between runs)", null);
            case SQLITE -> sqlite(settings.sqlitePath());
            case REDIS -> redis(settings.redisUrl());
        };
    }

    private static Check sqlite(Path file) {
        if (Files.isDirectory(file)) {
            return new Check(false, "store", "sqlite " + file + " is a directory", "give --db a file path");
        }
        if (Files.exists(file)) {
            return Files.isReadable(file) && Files.isWritable(file)
                    ? new Check(true, "store", "sqlite " + file + " (" + Entries.size(sizeOf(file)) + ")", null)
                    : new Check(false, "store", "sqlite " + file + " cannot be read and written by this user",
                            "fix the file's permissions, or use another file with --db or EXECACHE_SQLITE_PATH");
        }
        Path existing = file.toAbsolutePath().getParent();
        while (existing != null && !Files.exists(existing)) {
            existing = existing.getParent();
        }
        if (existing != null && Files.isDirectory(existing) && Files.isWritable(existing)) {
            return new Check(true, "store", "sqlite " + file + " (not created yet; the first stored result creates it)",
                    null);
        }
        return new Check(false, "store", "sqlite " + file + " cannot be created (" + existing + " is not a writable"
                + " directory)", "use another file with --db or EXECACHE_SQLITE_PATH, or set XDG_CACHE_HOME");
    }

    private Check redis(String url) {
        try (RedisCacheStore store = RedisCacheStore.connect(RedisStoreSettings.of(url), clock)) {
            return new Check(true, "store", "redis " + Redaction.redactUrl(url) + " (" + store.size() + " entries)", null);
        } catch (RuntimeException e) {
            return new Check(false, "store", "redis: " + e.getMessage(),
                    "start Redis, or correct --redis-url / EXECACHE_REDIS_URL");
        }
    }

    private static long sizeOf(Path file) {
        try {
            return Files.size(file);
        } catch (IOException e) {
            return 0;
        }
    }

    /** Looks a command up on the PATH this command line was given (not the JVM's). */
    private Optional<Path> onPath(String name) {
        String path = environment.variables().getOrDefault("PATH", "");
        for (String entry : path.split(File.pathSeparator)) {
            if (entry.isBlank()) {
                continue;
            }
            Path candidate = Path.of(entry, name);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    /** The first line a command prints, if it runs and exits 0 within a while. */
    private Optional<String> versionOf(String command, String flag) {
        try {
            ProcessBuilder builder = new ProcessBuilder(command, flag).redirectErrorStream(true)
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
            builder.environment().clear();
            builder.environment().putAll(environment.variables());
            Process process = builder.start();
            byte[] output = process.getInputStream().readNBytes(4096);
            if (!process.waitFor(COMMAND_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                return Optional.empty();
            }
            String first = new String(output, StandardCharsets.UTF_8).lines().findFirst().orElse("").strip();
            return process.exitValue() == 0 ? Optional.of(first) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }
}
