package dev.execache.cli;

import jakarta.inject.Inject;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "invalidate", mixinStandardHelpOptions = true,
        description = "Removes every cached result that depended on a tool, as a change of its version would.")
final class InvalidateCommand implements Callable<Integer> {
    private static final System.Logger LOG = System.getLogger("dev.execache.cli");

    private final SessionFactory sessions;

    @Spec
    CommandSpec spec;

    @Mixin
    CacheOptions cache = new CacheOptions();

    @Option(names = "--tool", paramLabel = "NAME", required = true, description = "The tool whose results to remove.")
    String tool;

    @Inject
    InvalidateCommand(SessionFactory sessions) {
        this.sessions = sessions;
    }

    @Override
    public Integer call() {
        if (tool.isBlank()) {
            throw new UsageException("--tool: the tool name must not be blank");
        }
        try (Session session = sessions.openForStoreManagement(cache.flags())) {
            int removed = session.executor().invalidateTool(tool);
            if (removed == 0 && !known(session)) {
                LOG.log(System.Logger.Level.WARNING, "no tool '" + tool + "' is known: the config names no such tool,"
                        + " this store has not seen it and no result depended on it (check the spelling)");
            }
            spec.commandLine().getOut().println("removed " + removed + (removed == 1 ? " entry" : " entries")
                    + " that depended on " + tool);
            spec.commandLine().getOut().flush();
            return ExitCode.OK;
        }
    }

    private boolean known(Session session) {
        return session.settings().tools().containsKey(tool)
                || session.store().lastSeenVersions(session.versionScope()).containsKey(tool);
    }
}
