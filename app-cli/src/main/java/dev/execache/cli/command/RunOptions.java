package dev.execache.cli.command;

import dev.execache.cli.settings.Settings;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** How code runs and is cached; shared by {@code run} and {@code serve}. */
final class RunOptions {
    @Mixin
    CacheOptions cache = new CacheOptions();

    @Option(names = "--no-cache",
            description = "Run without the cache: no result is read or stored (the run is only counted as bypassed, in the SQLite "
                    + "file if it exists). Default: false (env EXECACHE_NO_CACHE=1).")
    boolean noCache;

    @Option(names = "--ttl", paramLabel = "DURATION",
            description = "How long a result is reused, e.g. 90s, 5m, 2h. Default: 5m "
                    + "(env EXECACHE_TTL, config code_execution.cache.ttl_seconds).")
    String ttl;

    @Option(names = "--max-entries", paramLabel = "N",
            description = "Most results the store keeps; one more evicts the least recently used. Default: 100 "
                    + "(env EXECACHE_MAX_ENTRIES, config code_execution.cache.max_entries).")
    Integer maxEntries;

    @Option(names = "--timeout", paramLabel = "DURATION",
            description = "Wall-clock limit of one run, e.g. 30s. Default: 30s "
                    + "(env EXECACHE_TIMEOUT, config code_execution.timeout_seconds).")
    String timeout;

    @Option(names = "--memory-mb", paramLabel = "MB",
            description = "Memory limit of one run, in MiB. Default: 512 "
                    + "(env EXECACHE_MEMORY_MB, config code_execution.memory_mb).")
    Integer memoryMb;

    @Option(names = "--allow-read", paramLabel = "PATH",
            description = "A path the code may read (repeatable). Default: none (config code_execution.allow_read).")
    List<String> allowRead = new ArrayList<>();

    @Option(names = "--tool", paramLabel = "NAME[=VERSION]",
            description = "A tool the code depends on (repeatable); its version is part of the cache key and a new "
                    + "version invalidates its entries. Without =VERSION the version comes from tools: in the config. "
                    + "Default: none declared, so the code depends on every tool the config names.")
    List<String> tools = new ArrayList<>();

    Settings.Flags flags() {
        return new Settings.Flags(cache.config, cache.store, cache.redisUrl, cache.db, noCache, ttl, maxEntries,
                cache.requireStore, timeout, memoryMb, allowRead, tools, cache.redisPartitions);
    }
}
