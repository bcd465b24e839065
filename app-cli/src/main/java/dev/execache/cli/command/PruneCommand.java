package dev.execache.cli.command;

import dev.execache.cli.session.Session;
import dev.execache.cli.session.SessionFactory;
import dev.execache.cli.settings.Durations;
import dev.execache.core.spi.CacheEntry;
import jakarta.inject.Inject;
import java.io.PrintWriter;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "prune", mixinStandardHelpOptions = true,
        description = {"Removes expired results, and with --older-than also those stored longer ago than that.",
            "Expired results are never served anyway; pruning gives their space back now. Counters stay."})
final class PruneCommand extends StoreCommand {
    private final Clock clock;

    @Option(names = "--older-than", paramLabel = "DURATION",
            description = "Also remove results stored more than this long ago, e.g. 1h, 7d. Default: none.")
    String olderThan;

    @Inject
    PruneCommand(SessionFactory sessions, Clock clock) {
        super(sessions);
        this.clock = clock;
    }

    @Override
    void checkOptions() {
        age();
    }

    private Duration age() {
        return olderThan == null ? null : Durations.parse(olderThan, "--older-than");
    }

    @Override
    int run(Session session, PrintWriter out) {
        Duration age = age();
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
            throw storeFailed(session, e);
        }
        out.println("removed " + removed + (removed == 1 ? " entry" : " entries"));
        return ExitCode.OK;
    }
}
