package dev.execache.cli.command;

import dev.execache.cli.settings.Settings;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Option;

/** Where the cache is and how it behaves; shared by every command that uses the store. */
final class CacheOptions {
    @Option(names = "--config", paramLabel = "FILE",
            description = "Config file in the code_execution.cache.* shape, plus tools:. Default (env "
                    + "EXECACHE_CONFIG): the nearest execache.yaml in this directory or a parent, else "
                    + "$XDG_CONFIG_HOME/execache/config.yaml (~/.config/execache/config.yaml). `execache config` "
                    + "shows which.")
    Path config;

    @Option(names = "--store", paramLabel = "memory|sqlite|redis",
            description = "Where results are kept: memory (this process only), sqlite (a file, persistent) "
                    + "or redis (shared by a fleet). Default: sqlite (env EXECACHE_STORE).")
    String store;

    @Option(names = "--db", paramLabel = "PATH",
            description = "SQLite file. Default: $XDG_CACHE_HOME/execache/cache.db, "
                    + "else ~/.cache/execache/cache.db (env EXECACHE_SQLITE_PATH).")
    Path db;

    @Option(names = "--redis-url", paramLabel = "URL",
            description = "Redis to share the cache through: redis://[:password@]host:port[/db], "
                    + "redis-sentinel://host:port[,host:port...]/MASTER, redis-cluster://host:port[,host:port...]; rediss... for TLS. "
                    + "Default: " + Settings.DEFAULT_REDIS_URL + " (env EXECACHE_REDIS_URL).")
    String redisUrl;

    @Option(names = "--redis-partitions", paramLabel = "N",
            description = "How many partitions the redis store spreads one cache over (each a hash slot, so a Cluster"
                    + " spreads it over its masters); the same for the whole fleet. Default: 16 (env"
                    + " EXECACHE_REDIS_PARTITIONS, config redis_partitions).")
    Integer redisPartitions;

    @Option(names = "--require-store", negatable = true,
            description = "Fail (exit 3) when the store cannot be used, instead of warning and running uncached. "
                    + "Default: false (env EXECACHE_REQUIRE_STORE=1).")
    Boolean requireStore;

    Settings.Flags flags() {
        return new Settings.Flags(config, store, redisUrl, db, false, null, null, requireStore, null, null,
                List.of(), List.of(), redisPartitions);
    }
}
