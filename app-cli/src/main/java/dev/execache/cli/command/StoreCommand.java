package dev.execache.cli.command;

import dev.execache.cli.session.InfrastructureException;
import dev.execache.cli.session.Session;
import dev.execache.cli.session.SessionFactory;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * What the commands that manage the store ({@code list}, {@code prune}, {@code stats},
 * {@code clear}, {@code invalidate}) share: the store's options, options checked before anything
 * opens, a session opened for store management (see {@link SessionFactory#openForStoreManagement})
 * and closed after, and their output flushed.
 */
abstract class StoreCommand implements Callable<Integer> {
    private final SessionFactory sessions;

    @Spec
    CommandSpec spec;

    @Mixin
    CacheOptions cache = new CacheOptions();

    StoreCommand(SessionFactory sessions) {
        this.sessions = sessions;
    }

    /** Throws a {@link dev.execache.cli.settings.UsageException} for a bad option, before the store is opened. */
    void checkOptions() {
    }

    /** Does the command's work on the open store; returns the exit code. */
    abstract int run(Session session, PrintWriter out);

    @Override
    public final Integer call() {
        checkOptions();
        try (Session session = sessions.openForStoreManagement(cache.flags())) {
            PrintWriter out = spec.commandLine().getOut();
            int exit = run(session, out);
            out.flush();
            return exit;
        }
    }

    /** A store that fails a command which asked it for something: exit 3, naming the store. */
    static InfrastructureException storeFailed(Session session, RuntimeException e) {
        return new InfrastructureException("the " + session.settings().store() + " store failed: " + e.getMessage(), e);
    }
}
