package dev.execache.cli;

import dev.execache.core.CachePolicy;
import dev.execache.core.Limits;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * Every setting of a command, resolved from, highest first: flags, environment, the config
 * file, defaults.
 */
record Settings(
        StoreKind store,
        CachePolicy policy,
        Path sqlitePath,
        String redisUrl,
        boolean requireStore,
        Limits limits,
        Map<String, String> tools,
        Path denoPath,
        Path cacheDirectory,
        int warmPoolSize,
        Path configPath,
        GatewayConfig gateway) {

    static final String DEFAULT_REDIS_URL = "redis://127.0.0.1:6379";

    Settings {
        Objects.requireNonNull(store);
        Objects.requireNonNull(policy);
        Objects.requireNonNull(sqlitePath);
        Objects.requireNonNull(redisUrl);
        Objects.requireNonNull(limits);
        Objects.requireNonNull(cacheDirectory);
        if (warmPoolSize < 0) {
            throw new UsageException("warm pool size must not be negative: " + warmPoolSize);
        }
        tools = Map.copyOf(tools);
        Objects.requireNonNull(gateway);
    }

    /** What the command line said; null where it said nothing. */
    record Flags(
            Path config,
            String store,
            String redisUrl,
            Path db,
            boolean noCache,
            String ttl,
            Integer maxEntries,
            Boolean requireStore,
            String timeout,
            Integer memoryMb,
            List<String> allowRead,
            List<String> tools) {

        static Flags none() {
            return new Flags(null, null, null, null, false, null, null, null, null, null, List.of(), List.of());
        }
    }

    static Settings resolve(Flags flags, Map<String, String> env, Path workingDir) {
        ConfigFile config = loadConfig(flags, env, workingDir);
        String configName = config.path() == null ? "config" : config.path().toString();

        StoreKind store = StoreKind.SQLITE;
        if (config.store() != null) {
            store = StoreKind.parse(config.store(), configName + ": code_execution.cache.store");
        }
        if (env.get("EXECACHE_STORE") != null) {
            store = StoreKind.parse(env.get("EXECACHE_STORE"), "EXECACHE_STORE");
        }
        if (flags.store() != null) {
            store = StoreKind.parse(flags.store(), "--store");
        }

        boolean enabled = config.enabled() == null || config.enabled();
        String noCacheEnv = env.get("EXECACHE_NO_CACHE");
        if (noCacheEnv != null && !noCacheEnv.isBlank() && !noCacheEnv.equals("0") && !noCacheEnv.equalsIgnoreCase("false")) {
            enabled = false;
        }
        if (flags.noCache()) {
            enabled = false;
        }

        Duration ttl = config.ttlSeconds() == null ? CachePolicy.DEFAULT_TTL : Duration.ofSeconds(config.ttlSeconds());
        if (env.get("EXECACHE_TTL") != null) {
            ttl = Durations.parse(env.get("EXECACHE_TTL"), "EXECACHE_TTL");
        }
        if (flags.ttl() != null) {
            ttl = Durations.parse(flags.ttl(), "--ttl");
        }

        int maxEntries = config.maxEntries() == null ? CachePolicy.DEFAULT_MAX_ENTRIES : config.maxEntries();
        if (env.get("EXECACHE_MAX_ENTRIES") != null) {
            maxEntries = Durations.positiveInt(env.get("EXECACHE_MAX_ENTRIES"), "EXECACHE_MAX_ENTRIES");
        }
        if (flags.maxEntries() != null) {
            if (flags.maxEntries() < 1) {
                throw new UsageException("--max-entries: must be at least 1, not " + flags.maxEntries());
            }
            maxEntries = flags.maxEntries();
        }

        Path cacheDirectory = cacheDirectory(env);
        Path sqlitePath = cacheDirectory.resolve("cache.db");
        if (config.sqlitePath() != null) {
            sqlitePath = workingDir.resolve(config.sqlitePath());
        }
        if (env.get("EXECACHE_SQLITE_PATH") != null) {
            sqlitePath = workingDir.resolve(env.get("EXECACHE_SQLITE_PATH"));
        }
        if (flags.db() != null) {
            sqlitePath = workingDir.resolve(flags.db());
        }

        String redisUrl = first(flags.redisUrl(), env.get("EXECACHE_REDIS_URL"), config.redisUrl(), DEFAULT_REDIS_URL);

        boolean requireStore = Boolean.TRUE.equals(config.requireStore());
        if ("1".equals(env.get("EXECACHE_REQUIRE_STORE"))) {
            requireStore = true;
        }
        if (flags.requireStore() != null) {
            requireStore = flags.requireStore();
        }

        Duration timeout = config.timeoutSeconds() == null ? Limits.DEFAULT_TIMEOUT : Duration.ofSeconds(config.timeoutSeconds());
        if (env.get("EXECACHE_TIMEOUT") != null) {
            timeout = Durations.parse(env.get("EXECACHE_TIMEOUT"), "EXECACHE_TIMEOUT");
        }
        if (flags.timeout() != null) {
            timeout = Durations.parse(flags.timeout(), "--timeout");
        }

        int memoryMb = config.memoryMb() == null ? Limits.DEFAULT_MEMORY_MB : config.memoryMb();
        if (env.get("EXECACHE_MEMORY_MB") != null) {
            memoryMb = Durations.positiveInt(env.get("EXECACHE_MEMORY_MB"), "EXECACHE_MEMORY_MB");
        }
        if (flags.memoryMb() != null) {
            memoryMb = flags.memoryMb();
        }
        if (memoryMb < 16) {
            throw new UsageException("--memory-mb: must be at least 16, not " + memoryMb);
        }

        List<String> allowRead = config.allowRead() == null ? List.of() : config.allowRead();
        if (!flags.allowRead().isEmpty()) {
            allowRead = flags.allowRead();
        }
        allowRead = allowRead.stream().map(path -> workingDir.resolve(path).normalize().toString()).toList();

        Map<String, String> tools = new TreeMap<>(config.tools());
        for (String tool : flags.tools()) {
            if (tool.isBlank()) {
                throw new UsageException("--tool: the tool name must not be blank (write NAME or NAME=VERSION)");
            }
            int equals = tool.indexOf('=');
            if (equals < 0) {
                if (!tools.containsKey(tool)) {
                    throw new UsageException("--tool " + tool + ": no version known for '" + tool
                            + "'; give it as --tool " + tool + "=VERSION or under tools: in " + ConfigFile.DEFAULT_NAME);
                }
            } else {
                String name = tool.substring(0, equals).trim();
                String version = tool.substring(equals + 1).trim();
                if (name.isEmpty() || version.isEmpty()) {
                    throw new UsageException("--tool " + tool + ": write NAME=VERSION, both non-empty");
                }
                tools.put(name, version);
            }
        }

        Path denoPath = env.get("EXECACHE_DENO") == null ? null : workingDir.resolve(env.get("EXECACHE_DENO"));
        int warmPoolSize = env.get("EXECACHE_WARM_POOL") == null ? 0
                : nonNegative(env.get("EXECACHE_WARM_POOL"), "EXECACHE_WARM_POOL");
        // relative paths in the code resolve where the command was started (run, inspect and serve alike)
        Limits limits = Limits.DEFAULTS.withTimeout(timeout).withMemoryMb(memoryMb).withAllowRead(allowRead)
                .withWorkingDirectory(workingDir.toAbsolutePath().normalize().toString())
                .withMaxToolCalls(config.gateway().maxCallsPerRun()).withMaxToolBytes(config.gateway().maxBytesPerRun());
        boolean cacheNondeterministic = config.cacheNondeterministic() == null || config.cacheNondeterministic();
        return new Settings(store, new CachePolicy(enabled, ttl, maxEntries, cacheNondeterministic), sqlitePath,
                redisUrl, requireStore, limits, tools, denoPath, cacheDirectory, warmPoolSize, config.path(),
                config.gateway());
    }

    /** The same settings for a command that manages the store: it must open, and caching is on. */
    Settings forStoreManagement() {
        return new Settings(store, policy.withEnabled(true), sqlitePath, redisUrl, true, limits, tools, denoPath,
                cacheDirectory, warmPoolSize, configPath, gateway);
    }

    /** The same settings with this many Deno runners started ahead of time (for a long-running process). */
    Settings withWarmPoolSize(int size) {
        return new Settings(store, policy, sqlitePath, redisUrl, requireStore, limits, tools, denoPath,
                cacheDirectory, size, configPath, gateway);
    }

    /** The names of the tools the command line declared, without versions. */
    static List<String> declaredTools(Flags flags) {
        return flags.tools().stream().map(tool -> tool.contains("=") ? tool.substring(0, tool.indexOf('=')).trim() : tool).toList();
    }

    /** {@code $XDG_CACHE_HOME/execache}, else {@code ~/.cache/execache}: the SQLite file and the installed Deno live here. */
    static Path cacheDirectory(Map<String, String> env) {
        String xdg = env.get("XDG_CACHE_HOME");
        Path cacheHome = xdg != null && !xdg.isBlank() && Path.of(xdg).isAbsolute()
                ? Path.of(xdg)
                : Path.of(env.getOrDefault("HOME", System.getProperty("user.home")), ".cache");
        return cacheHome.resolve("execache");
    }

    private static int nonNegative(String text, String source) {
        try {
            int value = Integer.parseInt(text.trim());
            if (value >= 0) {
                return value;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new UsageException(source + ": '" + text + "' is not a whole number of zero or more");
    }

    private static ConfigFile loadConfig(Flags flags, Map<String, String> env, Path workingDir) {
        if (flags.config() != null) {
            return ConfigFile.read(workingDir.resolve(flags.config()));
        }
        if (env.get("EXECACHE_CONFIG") != null) {
            return ConfigFile.read(workingDir.resolve(env.get("EXECACHE_CONFIG")));
        }
        Path local = workingDir.resolve(ConfigFile.DEFAULT_NAME);
        return Files.isRegularFile(local) ? ConfigFile.read(local) : ConfigFile.empty();
    }

    private static String first(String... values) {
        for (String value : values) {
            if (value != null && !value.isBlank()) {
                return value;
            }
        }
        return null;
    }
}
