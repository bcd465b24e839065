package dev.execache.cli.command;

import dev.execache.cli.session.Session;
import dev.execache.cli.session.SessionFactory;
import dev.execache.cli.settings.UsageException;
import jakarta.inject.Inject;
import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "clear", mixinStandardHelpOptions = true,
        description = "Removes cached results: all of them, or those whose key matches a glob. Counters stay.")
final class ClearCommand extends StoreCommand {
    @Option(names = "--pattern", paramLabel = "GLOB", defaultValue = "*",
            description = "Keys to remove, * matching any run of characters and ? one, e.g. 'v1:read:*'. "
                    + "Default: ${DEFAULT-VALUE} (everything).")
    String pattern;

    @Inject
    ClearCommand(SessionFactory sessions) {
        super(sessions);
    }

    @Override
    void checkOptions() {
        if (pattern.isBlank()) {
            throw new UsageException("--pattern: the glob must not be blank");
        }
    }

    @Override
    int run(Session session, PrintWriter out) {
        int removed = session.executor().policy().clear(pattern);
        out.println("removed " + removed + (removed == 1 ? " entry" : " entries"));
        return ExitCode.OK;
    }
}
