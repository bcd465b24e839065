package dev.execache.sandbox;

import dev.execache.core.Limits;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Objects;

/**
 * How a {@link DenoSandbox} finds Deno and where it keeps its files.
 *
 * @param denoExecutable the Deno to use; {@code null} to look for {@code deno} on the PATH and
 *     otherwise install the pinned version from the npm registry
 * @param cacheDirectory where the installed Deno, the runner script and Deno's own cache
 *     directory ({@code DENO_DIR}) live
 * @param npmCommand the npm used to install Deno when none is found
 * @param warmPoolSize how many runners are started ahead of time and wait for code; 0 starts a
 *     process for every run (right for a one-shot command line)
 * @param warmPoolLimits the memory limit and read paths pooled runners are started with; a
 *     request that asks for other ones gets a process of its own (its timeout and output
 *     bounds do not matter here)
 * @param maxConcurrentRuns how many runs may go on at once in this sandbox; more wait their turn,
 *     and the wait does not count against their time limit. Default: {@link #defaultMaxConcurrentRuns}
 */
public record DenoSandboxSettings(
        Path denoExecutable, Path cacheDirectory, String npmCommand, int warmPoolSize, Limits warmPoolLimits,
        int maxConcurrentRuns) {

    /** The Deno version installed from the npm registry when no Deno is configured or on the PATH. */
    public static final String DENO_VERSION = "2.9.6";

    static final int MAX_WARM_POOL_SIZE = 64;

    public DenoSandboxSettings {
        if (denoExecutable != null) {
            denoExecutable = denoExecutable.toAbsolutePath().normalize();
        }
        cacheDirectory = Objects.requireNonNull(cacheDirectory, "cacheDirectory must not be null")
                .toAbsolutePath().normalize();
        Objects.requireNonNull(npmCommand, "npmCommand must not be null");
        if (npmCommand.isBlank()) {
            throw new IllegalArgumentException("npmCommand must not be blank");
        }
        if (warmPoolSize < 0 || warmPoolSize > MAX_WARM_POOL_SIZE) {
            throw new IllegalArgumentException(
                    "warmPoolSize must be between 0 and " + MAX_WARM_POOL_SIZE + ": " + warmPoolSize);
        }
        if (maxConcurrentRuns < 1) {
            throw new IllegalArgumentException("maxConcurrentRuns must be at least 1: " + maxConcurrentRuns);
        }
        try {
            LaunchFlags.of(Objects.requireNonNull(warmPoolLimits, "warmPoolLimits must not be null"));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("warmPoolLimits: " + e.getMessage(), e);
        }
    }

    /** Look for Deno, install it when missing, keep files under the user's cache directory. */
    public static DenoSandboxSettings defaults() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * {@code $XDG_CACHE_HOME/execache}, or {@code ~/.cache/execache} when XDG_CACHE_HOME is not
     * set to an absolute path.
     */
    public static Path defaultCacheDirectory() {
        String xdg = System.getenv("XDG_CACHE_HOME");
        if (xdg != null && !xdg.isBlank() && Path.of(xdg).isAbsolute()) {
            return Path.of(xdg, "execache");
        }
        return Path.of(System.getProperty("user.home"), ".cache", "execache");
    }

    /** One waiting runner per processor, at most four: each holds about 30 MB while it waits. */
    public static int defaultWarmPoolSize() {
        return Math.min(4, Runtime.getRuntime().availableProcessors());
    }

    /**
     * Two runs per processor (a run often waits), and no more than half the machine's memory can
     * hold at the memory limit each (plus Deno's own share); at least one.
     */
    public static int defaultMaxConcurrentRuns(int memoryMb) {
        int byCores = 2 * Runtime.getRuntime().availableProcessors();
        long totalMb = physicalMemoryMb();
        if (totalMb <= 0) {
            return byCores;
        }
        long byMemory = (totalMb / 2) / (memoryMb + 64L);
        return (int) Math.max(1, Math.min(byCores, byMemory));
    }

    private static long physicalMemoryMb() {
        if (ManagementFactory.getOperatingSystemMXBean()
                instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getTotalMemorySize() / (1024 * 1024);
        }
        return -1;
    }

    public Builder toBuilder() {
        return new Builder()
                .denoExecutable(denoExecutable)
                .cacheDirectory(cacheDirectory)
                .npmCommand(npmCommand)
                .warmPoolSize(warmPoolSize)
                .warmPoolLimits(warmPoolLimits)
                .maxConcurrentRuns(maxConcurrentRuns);
    }

    public static final class Builder {
        private Path denoExecutable;
        private Path cacheDirectory = defaultCacheDirectory();
        private String npmCommand = isWindows() ? "npm.cmd" : "npm";
        private int warmPoolSize = defaultWarmPoolSize();
        private Limits warmPoolLimits = Limits.DEFAULTS;
        private int maxConcurrentRuns;

        private Builder() {
        }

        public Builder denoExecutable(Path path) {
            this.denoExecutable = path;
            return this;
        }

        public Builder cacheDirectory(Path directory) {
            this.cacheDirectory = directory;
            return this;
        }

        public Builder npmCommand(String command) {
            this.npmCommand = command;
            return this;
        }

        public Builder warmPoolSize(int size) {
            this.warmPoolSize = size;
            return this;
        }

        public Builder warmPoolLimits(Limits limits) {
            this.warmPoolLimits = limits;
            return this;
        }

        /** 0 (the default) for {@link #defaultMaxConcurrentRuns} at the warm pool's memory limit. */
        public Builder maxConcurrentRuns(int runs) {
            this.maxConcurrentRuns = runs;
            return this;
        }

        public DenoSandboxSettings build() {
            int runs = maxConcurrentRuns != 0 ? maxConcurrentRuns
                    : defaultMaxConcurrentRuns(warmPoolLimits == null ? Limits.DEFAULTS.memoryMb() : warmPoolLimits.memoryMb());
            return new DenoSandboxSettings(denoExecutable, cacheDirectory, npmCommand, warmPoolSize, warmPoolLimits, runs);
        }
    }

    static boolean isWindows() {
        return System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("windows");
    }
}
