package dev.execache.sandbox;

import java.nio.file.Path;
import java.util.Objects;

/**
 * How a {@link DenoSandbox} finds Deno and where it keeps its files.
 *
 * @param denoExecutable the Deno to use; {@code null} to look for {@code deno} on the PATH and
 *     otherwise install the pinned version from the npm registry
 * @param cacheDirectory where the installed Deno, the runner script and Deno's own cache
 *     directory ({@code DENO_DIR}) live
 * @param npmCommand the npm used to install Deno when none is found
 */
public record DenoSandboxSettings(Path denoExecutable, Path cacheDirectory, String npmCommand) {

    /** The Deno version installed from the npm registry when no Deno is configured or on the PATH. */
    public static final String DENO_VERSION = "2.9.6";

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

    public Builder toBuilder() {
        return new Builder()
                .denoExecutable(denoExecutable)
                .cacheDirectory(cacheDirectory)
                .npmCommand(npmCommand);
    }

    public static final class Builder {
        private Path denoExecutable;
        private Path cacheDirectory = defaultCacheDirectory();
        private String npmCommand = isWindows() ? "npm.cmd" : "npm";

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

        public DenoSandboxSettings build() {
            return new DenoSandboxSettings(denoExecutable, cacheDirectory, npmCommand);
        }
    }

    static boolean isWindows() {
        return System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).startsWith("windows");
    }
}
