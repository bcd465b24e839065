package dev.execache.cli;

import dev.execache.core.CacheStats;
import jakarta.inject.Inject;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "stats", mixinStandardHelpOptions = true,
        description = "Shows what the cache has done: hits, misses, shared (answered by an identical run in flight), hit rate, latency saved, entries, evictions, "
                + "expirations, invalidations, store errors. On a shared store, for the whole fleet.")
final class StatsCommand implements Callable<Integer> {
    private final SessionFactory sessions;

    @Spec
    CommandSpec spec;

    @Mixin
    CacheOptions cache = new CacheOptions();

    @Option(names = "--json", description = "Print the figures as one JSON object. Default: false.")
    boolean json;

    @Inject
    StatsCommand(SessionFactory sessions) {
        this.sessions = sessions;
    }

    @Override
    public Integer call() {
        try (Session session = sessions.openForStoreManagement(cache.flags())) {
            Settings settings = session.settings();
            CacheStats stats = session.executor().stats();
            PrintWriter out = spec.commandLine().getOut();
            if (json) {
                var node = Output.stats(stats);
                node.put("store", settings.store().toString());
                out.println(Output.write(node));
            } else {
                row(out, "store", settings.store() + where(settings));
                row(out, "hits", Long.toString(stats.hits()));
                row(out, "misses", Long.toString(stats.misses()));
                row(out, "shared", Long.toString(stats.shared()));
                row(out, "hit rate", String.format(Locale.ROOT, "%.1f%%", stats.hitRate() * 100));
                row(out, "saved, total", Durations.human(stats.totalSaved()));
                row(out, "saved, per hit", Durations.human(stats.averageSaved()));
                row(out, "entries", stats.entries() + " (about " + kib(stats.estimatedBytes()) + ")");
                row(out, "evictions", Long.toString(stats.evictions()));
                row(out, "expirations", Long.toString(stats.expirations()));
                row(out, "invalidations", Long.toString(stats.invalidations()));
                row(out, "store errors", Long.toString(stats.storeErrors()));
                row(out, "damaged", stats.damaged() + " (failed their checksum or signature; removed, never served)");
                if (!stats.tools().isEmpty()) {
                    out.println("tool calls (included above):");
                    stats.tools().forEach((tool, counted) -> out.printf(Locale.ROOT,
                            "  %-14s %d hits, %d misses, hit rate %.1f%%, saved %s%n", tool, counted.hits(),
                            counted.misses(), counted.hitRate() * 100, Durations.human(counted.saved())));
                }
            }
            out.flush();
            return ExitCode.OK;
        }
    }

    private static String where(Settings settings) {
        return switch (settings.store()) {
            case SQLITE -> " " + settings.sqlitePath();
            case REDIS -> " " + Redaction.redactUrl(settings.redisUrl());
            case MEMORY -> " (this process only)";
        };
    }

    private static String kib(long bytes) {
        return bytes < 1024 ? bytes + " B" : String.format(Locale.ROOT, "%.1f KiB", bytes / 1024.0);
    }

    private static void row(PrintWriter out, String name, String value) {
        out.printf(Locale.ROOT, "%-16s %s%n", name, value);
    }
}
