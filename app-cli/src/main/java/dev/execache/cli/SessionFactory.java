package dev.execache.cli;

import com.google.inject.Injector;
import com.google.inject.ProvisionException;
import jakarta.inject.Inject;

/** Opens a {@link Session} for a command's settings, in a child injector of the process's. */
final class SessionFactory {
    private final Injector injector;
    private final Environment environment;

    @Inject
    SessionFactory(Injector injector, Environment environment) {
        this.injector = injector;
        this.environment = environment;
    }

    /** A session for a command that manages the store: the store must open, and caching is on. */
    Session openForStoreManagement(Settings.Flags flags) {
        return open(Settings.resolve(flags, environment.variables(), environment.workingDir()).forStoreManagement());
    }

    Session open(Settings settings) {
        try {
            return injector.createChildInjector(new AppModule(settings)).getInstance(Session.class);
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
