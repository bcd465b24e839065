package dev.execache.cli;

import jakarta.inject.Inject;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "clear", mixinStandardHelpOptions = true,
        description = "Removes cached results: all of them, or those whose key matches a glob. Counters stay.")
final class ClearCommand implements Callable<Integer> {
    private final SessionFactory sessions;

    @Spec
    CommandSpec spec;

    @Mixin
    CacheOptions cache = new CacheOptions();

    @Option(names = "--pattern", paramLabel = "GLOB", defaultValue = "*",
            description = "Keys to remove, * matching any run of characters and ? one, e.g. 'v1:read:*'. "
                    + "Default: ${DEFAULT-VALUE} (everything).")
    String pattern;

    @Inject
    ClearCommand(SessionFactory sessions) {
        this.sessions = sessions;
    }

    @Override
    public Integer call() {
        if (pattern.isBlank()) {
            throw new UsageException("--pattern: the glob must not be blank");
        }
        try (Session session = sessions.openForStoreManagement(cache.flags())) {
            int removed = session.executor().clear(pattern);
            spec.commandLine().getOut().println("removed " + removed + (removed == 1 ? " entry" : " entries"));
            spec.commandLine().getOut().flush();
            return ExitCode.OK;
        }
    }
}
