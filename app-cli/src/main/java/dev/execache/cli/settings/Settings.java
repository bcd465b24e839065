package dev.execache.cli.settings;

import dev.execache.core.CachePolicy;
import dev.execache.gateway.Expose;
import dev.execache.gateway.GatewayPolicy;
import dev.execache.core.Limits;
import dev.execache.store.redis.RedisStoreSettings;
import dev.execache.store.redis.SigningKeys;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Every setting of a command, resolved from, highest first: flags, environment, the config
 * file, defaults.
 */
public record Settings(
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
        GatewayConfig gateway,
        Map<String, String> sources,
        SigningKeys signingKeys,
        int redisPartitions,
        Expose expose) {

    public static final String DEFAULT_REDIS_URL = "redis://127.0.0.1:6379";

    public Settings {
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
        sources = Collections.unmodifiableMap(new LinkedHashMap<>(sources));
        Objects.requireNonNull(signingKeys);
        Objects.requireNonNull(expose);
    }

    /**
     * The person's own config files, under the config home, looked for when neither --config nor
     * EXECACHE_CONFIG names one and no project has one: {@code execache.yaml}, the name a project's
     * file has, then {@code config.yaml}, the name earlier versions read.
     */
    static final List<String> USER_CONFIGS = List.of("execache/execache.yaml", "execache/config.yaml");

    /** What the command line said; null where it said nothing. */
    public record Flags(
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
            List<String> tools,
            Integer redisPartitions,
            String expose) {

        /** Flags of a command that has no --expose. */
        public Flags(Path config, String store, String redisUrl, Path db, boolean noCache, String ttl, Integer maxEntries,
                Boolean requireStore, String timeout, Integer memoryMb, List<String> allowRead, List<String> tools,
                Integer redisPartitions) {
            this(config, store, redisUrl, db, noCache, ttl, maxEntries, requireStore, timeout, memoryMb, allowRead, tools,
                    redisPartitions, null);
        }

        public Flags withTools(List<String> newTools) {
            return new Flags(config, store, redisUrl, db, noCache, ttl, maxEntries, requireStore, timeout, memoryMb,
                    allowRead, newTools, redisPartitions, expose);
        }

        public Flags withConfig(Path newConfig) {
            return new Flags(newConfig, store, redisUrl, db, noCache, ttl, maxEntries, requireStore, timeout, memoryMb,
                    allowRead, tools, redisPartitions, expose);
        }

        public Flags withExpose(String newExpose) {
            return new Flags(config, store, redisUrl, db, noCache, ttl, maxEntries, requireStore, timeout, memoryMb,
                    allowRead, tools, redisPartitions, newExpose);
        }

        public static Flags none() {
            return new Flags(null, null, null, null, false, null, null, null, null, null, List.of(), List.of(), null);
        }
    }

    /**
     * What the gateway needs of the configuration: its rules, a TTL or bound a rule does not give taken from
     * the cache's own ({@code --ttl}, {@code EXECACHE_TTL}, the file, the default), as for code runs.
     */
    public GatewayPolicy gatewayPolicy() {
        return gateway.policy(policy);
    }

    public static Settings resolve(Flags flags, Environment environment) {
        return resolve(flags, environment.variables(), environment.workingDir());
    }

    public static Settings resolve(Flags flags, Map<String, String> env, Path workingDir) {
        Map<String, String> sources = new LinkedHashMap<>();
        ConfigFile config = loadConfig(flags, env, workingDir, sources);
        Layers layers = new Layers(config, env, sources);
        // Paths in a config file are relative to the file, which may be in a parent directory.
        Path configDir = config.path() == null ? workingDir : config.path().toAbsolutePath().getParent();

        StoreKind store = layers.pick("store", StoreKind.SQLITE,
                config.store() == null ? null : StoreKind.parse(config.store(), layers.configName + ": code_execution.cache.store"),
                "EXECACHE_STORE", text -> StoreKind.parse(text, "EXECACHE_STORE"),
                "--store", flags.store() == null ? null : StoreKind.parse(flags.store(), "--store"));
        CachePolicy policy = policy(flags, layers);
        Path cacheDirectory = cacheDirectory(env);
        Path sqlitePath = layers.pick("sqlite_path", cacheDirectory.resolve("cache.db"),
                config.sqlitePath() == null ? null : configDir.resolve(config.sqlitePath()),
                "EXECACHE_SQLITE_PATH", text -> workingDir.resolve(nonBlankPath(text, "EXECACHE_SQLITE_PATH")),
                "--db", flags.db() == null ? null : workingDir.resolve(nonBlankPath(flags.db().toString(), "--db")));
        if (config.sqlitePath() == null && env.get("EXECACHE_SQLITE_PATH") == null && flags.db() == null) {
            sources.put("sqlite_path", env.get("XDG_CACHE_HOME") == null ? "default (~/.cache)" : "default ($XDG_CACHE_HOME)");
        }
        String redisUrl = layers.pick("redis_url", DEFAULT_REDIS_URL, config.redisUrl(),
                "EXECACHE_REDIS_URL", text -> text, "--redis-url", flags.redisUrl());
        if (store == StoreKind.REDIS) {
            checkRedisUrl(redisUrl, sources.get("redis_url"));
        }
        int redisPartitions = layers.pick("redis_partitions", RedisStoreSettings.DEFAULT_PARTITIONS, config.redisPartitions(),
                "EXECACHE_REDIS_PARTITIONS", text -> Durations.positiveInt(text, "EXECACHE_REDIS_PARTITIONS"),
                "--redis-partitions", flags.redisPartitions());
        try {
            RedisStoreSettings.of(DEFAULT_REDIS_URL).withPartitions(redisPartitions);
        } catch (IllegalArgumentException e) {
            String source = sources.get("redis_partitions");
            String name = source.startsWith("flag ") ? source.substring(5) : source.startsWith("env ") ? source.substring(4) : source;
            throw new UsageException(name + ": " + e.getMessage(), e);
        }
        boolean requireStore = layers.pick("require_store", false, config.requireStore(),
                "EXECACHE_REQUIRE_STORE", "1"::equals, "--require-store", flags.requireStore());

        Path denoPath = null;
        sources.put("deno", "default (deno on the PATH, else installed into " + cacheDirectory + ")");
        if (env.get("EXECACHE_DENO") != null) {
            denoPath = workingDir.resolve(nonBlankPath(env.get("EXECACHE_DENO"), "EXECACHE_DENO"));
            sources.put("deno", "env EXECACHE_DENO");
        }
        int warmPoolSize = env.get("EXECACHE_WARM_POOL") == null ? 0
                : nonNegative(env.get("EXECACHE_WARM_POOL"), "EXECACHE_WARM_POOL");
        SigningKeys signingKeys = signingKeys(config, configDir, layers.fromConfig, env, workingDir, store, sources);
        return new Settings(store, policy, sqlitePath, redisUrl, requireStore, limits(flags, layers, configDir, workingDir),
                tools(flags, config, layers), denoPath, cacheDirectory, warmPoolSize, config.path(), config.gateway(), sources,
                signingKeys, redisPartitions, expose(flags, layers));
    }

    /** What serve's tools/list holds: {@code --expose}, {@code EXECACHE_EXPOSE}, {@code expose:}, else all. */
    private static Expose expose(Flags flags, Layers layers) {
        return layers.pick("expose", Expose.ALL,
                layers.config.expose() == null ? null : parseExpose(layers.config.expose(), layers.configName + ": expose"),
                "EXECACHE_EXPOSE", text -> parseExpose(text, "EXECACHE_EXPOSE"),
                "--expose", flags.expose() == null ? null : parseExpose(flags.expose(), "--expose"));
    }

    private static Expose parseExpose(String text, String source) {
        try {
            return Expose.parse(text, source);
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage(), e);
        }
    }

    private static CachePolicy policy(Flags flags, Layers layers) {
        ConfigFile config = layers.config;
        boolean enabled = !layers.pick("enabled", false, config.enabled() == null ? null : !config.enabled(),
                "EXECACHE_NO_CACHE", text -> !text.isBlank() && !text.equals("0") && !text.equalsIgnoreCase("false"),
                "--no-cache", flags.noCache() ? true : null);
        Duration ttl = layers.pick("ttl", CachePolicy.DEFAULT_TTL,
                config.ttlSeconds() == null ? null : Duration.ofSeconds(config.ttlSeconds()),
                "EXECACHE_TTL", text -> Durations.parse(text, "EXECACHE_TTL"),
                "--ttl", flags.ttl() == null ? null : Durations.parse(flags.ttl(), "--ttl"));
        if (flags.maxEntries() != null && flags.maxEntries() < 1) {
            throw new UsageException("--max-entries: must be at least 1, not " + flags.maxEntries());
        }
        int maxEntries = layers.pick("max_entries", CachePolicy.DEFAULT_MAX_ENTRIES, config.maxEntries(),
                "EXECACHE_MAX_ENTRIES", text -> Durations.positiveInt(text, "EXECACHE_MAX_ENTRIES"),
                "--max-entries", flags.maxEntries());
        boolean cacheNondeterministic = config.cacheNondeterministic() == null || config.cacheNondeterministic();
        return new CachePolicy(enabled, ttl, maxEntries, cacheNondeterministic);
    }

    /** Each run's limits; relative paths in the code resolve where the command was started (run, inspect and serve alike). */
    private static Limits limits(Flags flags, Layers layers, Path configDir, Path workingDir) {
        ConfigFile config = layers.config;
        Duration timeout = layers.pick("timeout", Limits.DEFAULT_TIMEOUT,
                config.timeoutSeconds() == null ? null : Duration.ofSeconds(config.timeoutSeconds()),
                "EXECACHE_TIMEOUT", text -> Durations.parse(text, "EXECACHE_TIMEOUT"),
                "--timeout", flags.timeout() == null ? null : Durations.parse(flags.timeout(), "--timeout"));
        int memoryMb = layers.pick("memory_mb", Limits.DEFAULT_MEMORY_MB, config.memoryMb(),
                "EXECACHE_MEMORY_MB", text -> Durations.positiveInt(text, "EXECACHE_MEMORY_MB"),
                "--memory-mb", flags.memoryMb());
        if (memoryMb < 16) {
            String source = flags.memoryMb() != null ? "--memory-mb" : env(layers, "EXECACHE_MEMORY_MB") != null
                    ? "EXECACHE_MEMORY_MB" : "code_execution.memory_mb in " + layers.configName;
            throw new UsageException(source + ": must be at least 16, not " + memoryMb);
        }
        flags.allowRead().forEach(path -> nonBlankPath(path, "--allow-read"));
        List<String> allowRead = layers.pick("allow_read", List.of(),
                config.allowRead() == null ? null
                        : config.allowRead().stream().map(path -> configDir.resolve(path).normalize().toString()).toList(),
                null, null, "--allow-read", flags.allowRead().isEmpty() ? null
                        : flags.allowRead().stream().map(path -> workingDir.resolve(path).normalize().toString()).toList());
        return Limits.DEFAULTS.withTimeout(timeout).withMemoryMb(memoryMb).withAllowRead(allowRead)
                .withWorkingDirectory(workingDir.toAbsolutePath().normalize().toString())
                .withMaxToolCalls(config.gateway().maxCallsPerRun()).withMaxToolBytes(config.gateway().maxBytesPerRun());
    }

    private static String env(Layers layers, String name) {
        return layers.env.get(name);
    }

    /** The tools' versions: the config file's, with {@code --tool NAME=VERSION} over them. */
    private static Map<String, String> tools(Flags flags, ConfigFile config, Layers layers) {
        Map<String, String> tools = new TreeMap<>(config.tools());
        layers.sources.put("tools", config.tools().isEmpty() ? "default" : layers.fromConfig);
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
                layers.sources.put("tools", "flag --tool" + (config.tools().isEmpty() ? "" : " and " + layers.fromConfig));
            }
        }
        return tools;
    }

    /** One setting's layers, highest first: a flag, the environment, the config file, a default; and which one it came from. */
    private static final class Layers {
        final ConfigFile config;
        final Map<String, String> env;
        final Map<String, String> sources;
        final String configName;
        final String fromConfig;

        Layers(ConfigFile config, Map<String, String> env, Map<String, String> sources) {
            this.config = config;
            this.env = env;
            this.sources = sources;
            this.configName = config.path() == null ? "config" : config.path().toString();
            this.fromConfig = "config " + configName;
        }

        /**
         * @param fromConfig the config file's value, null when it gives none
         * @param envName the environment variable, null when there is none for this setting
         * @param fromFlag the flag's value, null when the command line gives none
         * @param parseEnv reads the variable; for a yes/no setting a variable that reads as no
         *     ({@code EXECACHE_NO_CACHE=0}) leaves the lower layers' value
         */
        <T> T pick(String setting, T defaultValue, T fromConfig, String envName, Function<String, T> parseEnv,
                String flagName, T fromFlag) {
            T value = defaultValue;
            sources.put(setting, "default");
            if (fromConfig != null) {
                value = fromConfig;
                sources.put(setting, this.fromConfig);
            }
            String text = envName == null ? null : env.get(envName);
            if (text != null) {
                T parsed = parseEnv.apply(text);
                if (!(parsed instanceof Boolean flag) || flag) {
                    value = parsed;
                    sources.put(setting, "env " + envName);
                }
            }
            if (fromFlag != null) {
                value = fromFlag;
                sources.put(setting, "flag " + flagName);
            }
            return value;
        }
    }

    /**
     * The fleet's signing keys, for the shared store only, from, highest first:
     * EXECACHE_SIGNING_KEY (with EXECACHE_SIGNING_KEY_OLD, one older key still accepted), a key file
     * named by EXECACHE_SIGNING_KEY_FILE or the config's signing_key_file (the first key signs, the
     * others on later lines are accepted; blank lines and lines starting with # are skipped).
     */
    private static SigningKeys signingKeys(ConfigFile config, Path configDir, String fromConfig, Map<String, String> env,
            Path workingDir, StoreKind store, Map<String, String> sources) {
        String key = env.get("EXECACHE_SIGNING_KEY");
        String file = env.get("EXECACHE_SIGNING_KEY_FILE");
        if (key != null && !key.isBlank()) {
            sources.put("signing_key", "env EXECACHE_SIGNING_KEY");
            if (store != StoreKind.REDIS) {
                return SigningKeys.none();
            }
            String old = env.get("EXECACHE_SIGNING_KEY_OLD");
            List<String> keys = old == null || old.isBlank() ? List.of(key) : List.of(key, old);
            return parseKeys(keys, "EXECACHE_SIGNING_KEY");
        }
        String old = env.get("EXECACHE_SIGNING_KEY_OLD");
        if (store == StoreKind.REDIS && old != null && !old.isBlank()) {
            // An old key alone would leave the entries unsigned (or signed by the key file) without a word.
            throw new UsageException("EXECACHE_SIGNING_KEY_OLD: an old key is accepted only beside EXECACHE_SIGNING_KEY,"
                    + " the key that signs; set that too, or put both keys in the key file (the first signs)");
        }
        Path path;
        String source;
        if (file != null && !file.isBlank()) {
            path = workingDir.resolve(file.strip());
            source = "EXECACHE_SIGNING_KEY_FILE";
            sources.put("signing_key", "file " + path + " (env EXECACHE_SIGNING_KEY_FILE)");
        } else if (config.signingKeyFile() != null) {
            path = configDir.resolve(config.signingKeyFile());
            source = "code_execution.cache.signing_key_file in " + fromConfig.substring("config ".length());
            sources.put("signing_key", "file " + path + " (" + fromConfig + ")");
        } else {
            sources.put("signing_key", "none (entries in a shared store are not signed)");
            return SigningKeys.none();
        }
        if (store != StoreKind.REDIS) {
            return SigningKeys.none();
        }
        List<String> keys;
        try {
            keys = Files.readAllLines(path).stream().map(String::strip)
                    .filter(line -> !line.isEmpty() && !line.startsWith("#")).toList();
        } catch (IOException | UncheckedIOException e) {
            throw new UsageException(source + ": cannot read the signing key file " + path + " ("
                    + (e instanceof NoSuchFileException ? "no such file" : e.getMessage()) + ")");
        }
        if (keys.isEmpty()) {
            throw new UsageException(source + ": the signing key file " + path + " holds no key");
        }
        return parseKeys(keys, source);
    }

    private static SigningKeys parseKeys(List<String> keys, String source) {
        try {
            return SigningKeys.of(keys);
        } catch (IllegalArgumentException e) {
            throw new UsageException(source + ": " + e.getMessage(), e);
        }
    }

    private static String nonBlankPath(String path, String source) {
        if (path.isBlank()) {
            throw new UsageException(source + ": the path must not be empty");
        }
        return path;
    }

    /** A Redis URL is a usage error when it is wrong, not a store that merely cannot be reached. */
    private static void checkRedisUrl(String url, String source) {
        try {
            RedisStoreSettings.of(url);
        } catch (IllegalArgumentException e) {
            String name = source.startsWith("flag ") ? source.substring(5)
                    : source.startsWith("env ") ? source.substring(4) : source;
            throw new UsageException(name + ": " + e.getMessage(), e);
        }
    }

    /** The same settings for a command that manages the store: it must open, and caching is on. */
    public Settings forStoreManagement() {
        return new Settings(store, policy.withEnabled(true), sqlitePath, redisUrl, true, limits, tools, denoPath,
                cacheDirectory, warmPoolSize, configPath, gateway, sources, signingKeys, redisPartitions, expose);
    }

    /** The same settings with this many Deno runners started ahead of time (for a long-running process). */
    public Settings withWarmPoolSize(int size) {
        return new Settings(store, policy, sqlitePath, redisUrl, requireStore, limits, tools, denoPath,
                cacheDirectory, size, configPath, gateway, sources, signingKeys, redisPartitions, expose);
    }

    /** The same settings with only these of the gateway's servers (a run starts only those its code names). */
    public Settings withServers(Set<String> names) {
        return new Settings(store, policy, sqlitePath, redisUrl, requireStore, limits, tools, denoPath,
                cacheDirectory, warmPoolSize, configPath, gateway.withOnlyServers(names), sources, signingKeys,
                redisPartitions, expose);
    }

    /** The names of the tools the command line declared, without versions. */
    public static List<String> declaredTools(Flags flags) {
        return flags.tools().stream().map(tool -> tool.contains("=") ? tool.substring(0, tool.indexOf('=')).trim() : tool).toList();
    }

    /**
     * Where the servers a command starts write their stderr (a run's, {@code execache tools}'): {@code
     * $XDG_STATE_HOME/execache/servers.log}, else {@code ~/.local/state/execache/servers.log}.
     */
    public static Path serverLog(Map<String, String> env) {
        String xdg = env.get("XDG_STATE_HOME");
        Path stateHome = xdg != null && !xdg.isBlank() && Path.of(xdg).isAbsolute()
                ? Path.of(xdg)
                : Path.of(env.getOrDefault("HOME", System.getProperty("user.home")), ".local", "state");
        return stateHome.resolve("execache").resolve("servers.log");
    }

    /** {@code $XDG_CACHE_HOME/execache}, else {@code ~/.cache/execache}: the SQLite file and the installed Deno live here. */
    public static Path cacheDirectory(Map<String, String> env) {
        String xdg = env.get("XDG_CACHE_HOME");
        Path cacheHome = xdg != null && !xdg.isBlank() && Path.of(xdg).isAbsolute()
                ? Path.of(xdg)
                : Path.of(env.getOrDefault("HOME", System.getProperty("user.home")), ".cache");
        return cacheHome.resolve("execache");
    }

    /**
     * {@code $XDG_STATE_HOME/execache/sign-ins}, else {@code ~/.local/state/execache/sign-ins}: a
     * person's sign-ins to url servers, in owner-only files.
     */
    public static Path signInDirectory(Map<String, String> env) {
        String xdg = env.get("XDG_STATE_HOME");
        Path stateHome = xdg != null && !xdg.isBlank() && Path.of(xdg).isAbsolute()
                ? Path.of(xdg)
                : Path.of(env.getOrDefault("HOME", System.getProperty("user.home")), ".local", "state");
        return stateHome.resolve("execache").resolve("sign-ins");
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

    /**
     * The config file, looked for as git and deno look for theirs: --config, then
     * EXECACHE_CONFIG, then the nearest execache.yaml in the working directory or a parent,
     * then the person's ({@link #USER_CONFIGS} under $XDG_CONFIG_HOME, else ~/.config). A file
     * named by a flag or variable must exist; one found by looking need not. Every place looked at
     * goes into the sources as {@code config_search}, so that serve can say where it looked: a
     * host may start it in any directory.
     */
    private static ConfigFile loadConfig(Flags flags, Map<String, String> env, Path workingDir, Map<String, String> sources) {
        if (flags.config() != null) {
            sources.put("config", "flag --config");
            sources.put("config_search", "named by --config");
            return ConfigFile.read(workingDir.resolve(nonBlankPath(flags.config().toString(), "--config")));
        }
        if (env.get("EXECACHE_CONFIG") != null) {
            sources.put("config", "env EXECACHE_CONFIG");
            sources.put("config_search", "named by EXECACHE_CONFIG");
            return ConfigFile.read(workingDir.resolve(nonBlankPath(env.get("EXECACHE_CONFIG"), "EXECACHE_CONFIG")));
        }
        List<Path> userFiles = userConfigFiles(env);
        String looked = "looked for " + ConfigFile.DEFAULT_NAME + " in " + workingDir + " and its parents"
                + (userFiles.isEmpty() ? " (no HOME or XDG_CONFIG_HOME for the person's own)"
                        : ", then " + userFiles.stream().map(Path::toString).collect(Collectors.joining(", ")));
        sources.put("config_search", looked);
        for (Path dir = workingDir; dir != null; dir = dir.getParent()) {
            Path candidate = dir.resolve(ConfigFile.DEFAULT_NAME);
            if (Files.isRegularFile(candidate)) {
                sources.put("config", dir.equals(workingDir) ? "found in the working directory"
                        : "found in a parent of the working directory");
                return ConfigFile.read(candidate);
            }
        }
        for (Path user : userFiles) {
            if (Files.isRegularFile(user)) {
                sources.put("config", "the user's config");
                return ConfigFile.read(user);
            }
        }
        sources.put("config", "none found (" + looked + ")");
        return ConfigFile.empty();
    }

    /**
     * Where the person's own config file goes: {@code $XDG_CONFIG_HOME/execache/execache.yaml}, else
     * {@code ~/.config/execache/execache.yaml}; null when the environment names neither home.
     */
    public static Path userConfigFile(Map<String, String> env) {
        List<Path> files = userConfigFiles(env);
        return files.isEmpty() ? null : files.get(0);
    }

    private static List<Path> userConfigFiles(Map<String, String> env) {
        Path home = configHome(env);
        return home == null ? List.of() : USER_CONFIGS.stream().map(home::resolve).toList();
    }

    /** {@code $XDG_CONFIG_HOME}, else {@code $HOME/.config}; null when the environment names neither. */
    static Path configHome(Map<String, String> env) {
        String xdg = env.get("XDG_CONFIG_HOME");
        if (xdg != null && !xdg.isBlank() && Path.of(xdg).isAbsolute()) {
            return Path.of(xdg);
        }
        String home = env.get("HOME");
        return home == null || home.isBlank() ? null : Path.of(home, ".config");
    }

}
