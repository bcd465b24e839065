package dev.execache.cli.session;

import com.google.inject.Injector;
import com.google.inject.ProvisionException;
import dev.execache.cli.settings.Environment;
import dev.execache.cli.settings.Settings;
import dev.execache.cli.settings.StoreKind;
import dev.execache.cli.settings.UsageException;
import jakarta.inject.Inject;
import java.nio.file.Files;

/** Opens a {@link Session} for a command's settings, in a child injector of the process's. */
public final class SessionFactory {
    private static final System.Logger LOG = System.getLogger("dev.execache.cli");

    private final Injector injector;
    private final Environment environment;

    @Inject
    SessionFactory(Injector injector, Environment environment) {
        this.injector = injector;
        this.environment = environment;
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
        return open(settings, false, false);
    }

    /**
     * A session for a process that answers someone before it needs its store ({@code serve}): a SQLite store is
     * opened by {@link Session#openStoreSoon} or by its first use, whichever comes first.
     */
    public Session openWithStoreLater(Settings settings) {
        return open(settings, false, true);
    }

    private Session open(Settings settings, boolean emptyInstead) {
        return open(settings, emptyInstead, false);
    }

    private Session open(Settings settings, boolean emptyInstead, boolean storeLater) {
        try {
            return injector.createChildInjector(new AppModule(settings, emptyInstead, storeLater)).getInstance(Session.class);
        } catch (ProvisionException e) {
            for (var message : e.getErrorMessages()) {
                Throwable cause = message.getCause();
                if (cause instanceof RuntimeException runtime
                        && (cause instanceof UsageException || cause instanceof InfrastructureException)) {
                    throw runtime;
                }
            }
            throw e;
        }
    }
}
