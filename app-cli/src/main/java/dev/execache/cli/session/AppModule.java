package dev.execache.cli.session;

import dev.execache.core.StoreGuard;
import com.google.inject.AbstractModule;
import com.google.inject.Provides;
import com.google.inject.Singleton;
import dev.execache.cli.output.StoreDescription;
import dev.execache.cli.settings.Environment;
import dev.execache.cli.settings.Settings;
import dev.execache.cli.settings.StoreKind;
import dev.execache.cli.settings.UsageException;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.spi.CacheStore;
import dev.execache.core.spi.Sandbox;
import dev.execache.core.spi.ToolVersionSource;
import dev.execache.sandbox.DenoSandboxSettings;
import dev.execache.store.memory.MemoryCacheStore;
import dev.execache.store.redis.RedisCacheStore;
import dev.execache.store.redis.RedisStoreSettings;
import dev.execache.store.sqlite.SqliteCacheStore;
import java.nio.file.Files;
import java.time.Clock;
import java.time.Duration;

/** Chooses and builds the store, the sandbox and the tool versions from a command's settings. */
final class AppModule extends AbstractModule {
    /** How often a long-running process tries again to open a store that was unusable at start. */
    private static final Duration REOPEN_EVERY = Duration.ofSeconds(10);
    private static final System.Logger LOG = System.getLogger("dev.execache.cli");

    private final Settings settings;
    private final boolean emptyStore;
    private final boolean storeLater;

    AppModule(Settings settings) {
        this(settings, false, false);
    }

    /**
     * With {@code emptyStore}, an empty store in memory stands in for one that does not exist yet; with
     * {@code storeLater}, a SQLite store that need not open at start is opened later ({@link OpeningStore}).
     */
    AppModule(Settings settings, boolean emptyStore, boolean storeLater) {
        this.settings = settings;
        this.emptyStore = emptyStore;
        this.storeLater = storeLater;
    }

    @Provides
    Settings settings() {
        return settings;
    }

    /** The one guard of the command's store, given to every face built on it. */
    @Provides
    @Singleton
    StoreGuard guard(CacheStore store, Resources resources) {
        return resources.guard(store);
    }

    @Provides
    @Singleton
    CacheStore store(Clock clock, Resources resources) {
        if (!settings.policy().enabled()) {
            return countingOnly(clock, resources);
        }
        if (emptyStore) {
            return new MemoryCacheStore(settings.policy().maxEntries(), clock);
        }
        // Redis connects in the background already; a store required at start must answer at start
        if (storeLater && settings.store() == StoreKind.SQLITE && !settings.requireStore()) {
            return new OpeningStore(() -> openOrStandIn(clock, resources));
        }
        return openOrStandIn(clock, resources);
    }

    /** The store, or one that stands in for it while it cannot be opened (which tries again now and then). */
    private CacheStore openOrStandIn(Clock clock, Resources resources) {
        try {
            return openStore(clock, resources);
        } catch (UsageException e) {
            throw e;
        } catch (RuntimeException e) {
            String problem = unusable(e);
            if (settings.requireStore()) {
                throw new InfrastructureException(problem, e);
            }
            return new ReopeningStore(() -> {
                try {
                    return openStore(clock, resources);
                } catch (RuntimeException again) {
                    throw new IllegalStateException(unusable(again), again);
                }
            }, problem, clock, REOPEN_EVERY);
        }
    }

    /**
     * With caching off no result is read or stored, but each run counts itself as bypassed: in
     * the SQLite file if it exists (none is created for it), else in a store of this process.
     * Not on Redis, so that a run with caching off never waits for it.
     */
    private CacheStore countingOnly(Clock clock, Resources resources) {
        if (settings.store() == StoreKind.SQLITE && Files.exists(settings.sqlitePath())) {
            try {
                return openStore(clock, resources);
            } catch (RuntimeException e) {
                // counting a bypass is not worth a warning on a run that asked for no cache
            }
        }
        return new MemoryCacheStore(settings.policy().maxEntries(), clock);
    }

    private String unusable(RuntimeException e) {
        return "cannot use the " + settings.store() + " store: " + e.getMessage();
    }

    private CacheStore openStore(Clock clock, Resources resources) {
        CacheStore store = openStoreOf(settings.store(), clock, resources);
        resources.opened(store, StoreDescription.of(settings));
        return store;
    }

    private CacheStore openStoreOf(StoreKind kind, Clock clock, Resources resources) {
        int maxEntries = settings.policy().maxEntries();
        return switch (kind) {
            case MEMORY -> new MemoryCacheStore(maxEntries, clock);
            case SQLITE -> resources.store("sqlite " + settings.sqlitePath() + ", at most " + maxEntries + " entries",
                    settings.sqlitePath(), () -> new SqliteCacheStore(settings.sqlitePath(), maxEntries, clock));
            case REDIS -> {
                RedisStoreSettings redis = redisSettings(maxEntries);
                // Only a store required at start is waited for; otherwise Redis is connected in the
                // background and used as soon as it answers.
                boolean[] openedNow = {false};
                // The keys are part of what the store is: a command never uses a store opened with
                // another command's keys (or none), whatever process keeps it open.
                CacheStore store = resources.store("redis " + settings.redisUrl() + ", at most " + maxEntries + " entries"
                                + " in " + settings.redisPartitions() + " partitions"
                                + (settings.signingKeys().isEmpty() ? "" : ", signed (keys " + settings.signingKeys().id() + ")"),
                        null, () -> {
                            openedNow[0] = true;
                            return settings.requireStore() ? RedisCacheStore.connect(redis, clock) : RedisCacheStore.open(redis, clock);
                        });
                if (!openedNow[0]) {
                    // opening it warned the command that did; this one is told too
                    redis.unsignedWarning().ifPresent(warning -> LOG.log(System.Logger.Level.WARNING, warning));
                }
                if (settings.requireStore()) {
                    // A store the resident server opened for an earlier command must answer now too.
                    store.size();
                }
                yield store;
            }
        };
    }

    private RedisStoreSettings redisSettings(int maxEntries) {
        try {
            return RedisStoreSettings.of(settings.redisUrl()).withMaxEntries(maxEntries).withSigningKeys(settings.signingKeys())
                    .withPartitions(settings.redisPartitions());
        } catch (IllegalArgumentException e) {
            throw new UsageException("--redis-url: " + e.getMessage(), e);
        }
    }

    @Provides
    @Singleton
    Sandbox sandbox(Resources resources, Environment environment) {
        return resources.sandbox(DenoSandboxSettings.builder()
                .denoExecutable(settings.denoPath())
                .cacheDirectory(settings.cacheDirectory())
                .warmPoolSize(settings.warmPoolSize())
                .warmPoolLimits(settings.limits())
                .maxConcurrentRuns(maxRuns(environment.variables().get("EXECACHE_MAX_RUNS")))
                .build());
    }

    /** EXECACHE_MAX_RUNS: how many runs may go on at once; unset (0) for the sandbox's default. */
    private static int maxRuns(String value) {
        if (value == null || value.isBlank()) {
            return 0;
        }
        try {
            int runs = Integer.parseInt(value.strip());
            if (runs >= 1) {
                return runs;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new UsageException("EXECACHE_MAX_RUNS: '" + value + "' is not a whole number of one or more");
    }

    @Provides
    @Singleton
    ToolVersionSource toolVersions() {
        return new MutableToolVersions(settings.tools());
    }
}
