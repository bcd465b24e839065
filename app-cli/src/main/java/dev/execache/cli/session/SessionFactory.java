package dev.execache.cli.session;

import dev.execache.cli.settings.Environment;
import dev.execache.cli.settings.Settings;
import dev.execache.cli.settings.StoreKind;
import dev.execache.cli.settings.UsageException;
import dev.execache.core.spi.CacheStore;
import dev.execache.core.spi.ToolVersionSource;
import jakarta.inject.Inject;
import java.nio.file.Files;
import java.time.Clock;

/** Opens a {@link Session} for a command's settings. */
public final class SessionFactory {
    private static final System.Logger LOG = System.getLogger("dev.execache.cli");

    private final Environment environment;
    private final Clock clock;
    private final Resources resources;

    @Inject
    SessionFactory(Environment environment, Clock clock, Resources resources) {
        this.environment = environment;
        this.clock = clock;
        this.resources = resources;
    }

    /**
     * A session for a command that manages the store: the store must open, and caching is on.
     * The memory store is refused (it holds nothing between runs), and a SQLite file that does
     * not exist is not created: the command sees an empty store and the file stays absent.
     */
    public Session openForStoreManagement(Settings.Flags flags) {
        Settings settings = Settings.resolve(flags, environment).forStoreManagement();
        if (settings.store() == StoreKind.MEMORY) {
            String source = settings.sources().getOrDefault("store", "");
            String name = source.startsWith("flag ") ? source.substring(5) + " memory"
                    : source.startsWith("env ") ? source.substring(4) + "=memory" : source + ": store memory";
            throw new UsageException(name + ": the memory store keeps nothing between runs, so there is nothing"
                    + " here to manage; use --store sqlite or --store redis");
        }
        boolean absent = settings.store() == StoreKind.SQLITE && !Files.exists(settings.sqlitePath());
        if (absent) {
            LOG.log(System.Logger.Level.INFO, "no cache at " + settings.sqlitePath() + " (nothing was stored there yet)");
        }
        return open(settings, absent);
    }

    public Session open(Settings settings) {
        return open(settings, false);
    }

    private Session open(Settings settings, boolean emptyInstead) {
        SessionParts parts = new SessionParts(settings, emptyInstead);
        CacheStore store = parts.store(clock, resources);
        ToolVersionSource toolVersions = parts.toolVersions();
        return new Session(settings, store, () -> parts.sandbox(resources, environment),
                new CachedExecutorFactory(store, toolVersions, settings, clock, environment), toolVersions, resources);
    }
}
