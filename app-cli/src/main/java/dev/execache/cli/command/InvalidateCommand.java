package dev.execache.cli.command;

import dev.execache.cli.session.Session;
import dev.execache.cli.session.SessionFactory;
import dev.execache.cli.settings.UsageException;
import jakarta.inject.Inject;
import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "invalidate", mixinStandardHelpOptions = true,
        description = "Removes every cached result that depended on a tool, as a change of its version would.")
final class InvalidateCommand extends StoreCommand {
    private static final System.Logger LOG = System.getLogger("dev.execache.cli");

    @Option(names = "--tool", paramLabel = "NAME", required = true, description = "The tool whose results to remove.")
    String tool;

    @Inject
    InvalidateCommand(SessionFactory sessions) {
        super(sessions);
    }

    @Override
    void checkOptions() {
        if (tool.isBlank()) {
            throw new UsageException("--tool: the tool name must not be blank");
        }
    }

    @Override
    int run(Session session, PrintWriter out) {
        int removed = session.executor().policy().invalidateTool(tool);
        if (removed == 0 && !known(session)) {
            LOG.log(System.Logger.Level.WARNING, "no tool '" + tool + "' is known: the config names no such tool,"
                    + " this store has not seen it and no result depended on it (check the spelling)");
        }
        out.println("removed " + removed + (removed == 1 ? " entry" : " entries") + " that depended on " + tool);
        return ExitCode.OK;
    }

    private boolean known(Session session) {
        return session.settings().tools().containsKey(tool)
                || session.store().lastSeenVersions(session.versionScope()).containsKey(tool);
    }
}
