package dev.execache.cli.command;

import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.execache.cli.output.Entries;
import dev.execache.cli.output.Output;
import dev.execache.cli.session.Session;
import dev.execache.cli.session.SessionFactory;
import dev.execache.core.spi.CacheEntry;
import dev.execache.gateway.Json;
import jakarta.inject.Inject;
import java.io.PrintWriter;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "list", aliases = "ls", mixinStandardHelpOptions = true,
        description = {"Lists the cached results, newest first: age, TTL left, hits, size, tools and label.",
            "Reading the list counts no hit. Give a key to `inspect` for one entry in full."})
final class ListCommand extends StoreCommand {
    private final Clock clock;

    @Option(names = "--json", description = "Print one JSON array, an object per entry (key, label, createdAt, "
            + "expiresAt, ageMs, ttlLeftMs, hits, executionTimeMs, bytes, tools). Default: false.")
    boolean json;

    @Inject
    ListCommand(SessionFactory sessions, Clock clock) {
        super(sessions);
        this.clock = clock;
    }

    @Override
    int run(Session session, PrintWriter out) {
        Instant now = clock.instant();
        List<CacheEntry> entries = session.executor().policy().entries().stream()
                .sorted(Comparator.comparing(CacheEntry::createdAt).reversed().thenComparing(CacheEntry::key))
                .toList();
        if (json) {
            ArrayNode array = Json.MAPPER.createArrayNode();
            entries.forEach(entry -> array.add(Entries.json(entry, now)));
            out.println(Json.write(array));
        } else if (entries.isEmpty()) {
            spec.commandLine().getErr().println("execache: no cached results");
        } else {
            String format = "%-26s %5s %8s %5s %9s  %-20s %s%n";
            out.printf(Locale.ROOT, format, "KEY", "AGE", "TTL LEFT", "HITS", "SIZE", "TOOLS", "LABEL");
            for (CacheEntry entry : entries) {
                out.printf(Locale.ROOT, format, Entries.shortKey(entry.key()),
                        Entries.age(Duration.between(entry.createdAt(), now)),
                        Entries.age(Duration.between(now, entry.expiresAt())),
                        entry.hits(), Entries.size(entry.estimatedBytes()),
                        Entries.tools(entry.dependsOnTools()), entry.label());
            }
        }
        return ExitCode.OK;
    }
}
