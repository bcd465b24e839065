package dev.execache.cli;

import dev.execache.core.CacheEntry;
import jakarta.inject.Inject;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "prune", mixinStandardHelpOptions = true,
        description = {"Removes expired results, and with --older-than also those stored longer ago than that.",
            "Expired results are never served anyway; pruning gives their space back now. Counters stay."})
final class PruneCommand implements Callable<Integer> {
    private final SessionFactory sessions;
    private final Clock clock;

    @Spec
    CommandSpec spec;

    @Mixin
    CacheOptions cache = new CacheOptions();

    @Option(names = "--older-than", paramLabel = "DURATION",
            description = "Also remove results stored more than this long ago, e.g. 1h, 7d. Default: none.")
    String olderThan;

    @Inject
    PruneCommand(SessionFactory sessions, Clock clock) {
        this.sessions = sessions;
        this.clock = clock;
    }

    @Override
    public Integer call() {
        Duration age = olderThan == null ? null : Durations.parse(olderThan, "--older-than");
        try (Session session = sessions.openForStoreManagement(cache.flags())) {
            int removed;
            try {
                removed = session.store().purgeExpired();
                if (age != null) {
                    Instant cutoff = clock.instant().minus(age);
                    for (CacheEntry entry : session.store().entries()) {
                        if (entry.createdAt().isBefore(cutoff) && session.store().remove(entry.key())) {
                            removed++;
                        }
                    }
                }
            } catch (RuntimeException e) {
                throw new InfrastructureException("the " + session.settings().store() + " store failed: "
                        + e.getMessage(), e);
            }
            spec.commandLine().getOut().println("removed " + removed + (removed == 1 ? " entry" : " entries"));
            spec.commandLine().getOut().flush();
            return ExitCode.OK;
        }
    }
}
