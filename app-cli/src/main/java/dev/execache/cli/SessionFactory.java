package dev.execache.cli;

import com.google.inject.Injector;
import com.google.inject.ProvisionException;
import jakarta.inject.Inject;

/** Opens a {@link Session} for a command's settings, in a child injector of the process's. */
final class SessionFactory {
    private final Injector injector;

    @Inject
    SessionFactory(Injector injector) {
        this.injector = injector;
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
