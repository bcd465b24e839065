package dev.execache.cli.command;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.cli.output.Console;
import dev.execache.cli.output.Entries;
import dev.execache.cli.output.OpenMetrics;
import dev.execache.cli.output.Output;
import dev.execache.cli.output.StoreDescription;
import dev.execache.cli.session.Session;
import dev.execache.cli.session.SessionFactory;
import dev.execache.cli.settings.Durations;
import dev.execache.cli.settings.StoreKind;
import dev.execache.cli.settings.UsageException;
import dev.execache.core.CacheStats;
import dev.execache.core.KeptOut;
import dev.execache.core.ToolStats;
import dev.execache.gateway.Json;
import dev.execache.store.redis.RedisCacheStore;
import jakarta.inject.Inject;
import java.io.PrintWriter;
import java.math.BigDecimal;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import sun.misc.Signal;
import sun.misc.SignalHandler;

@Command(name = "stats", mixinStandardHelpOptions = true,
        description = {"Shows what the cache has done: hits, misses, shared (answered by an identical run in flight), "
                + "failed, uncacheable (and why), bypassed, hit rate, latency saved, entries, evictions, expirations, "
                + "invalidations, store errors, the context code mode kept out of agents (bytes and estimated "
                + "tokens); the store, where it is and its limits; since when it counts. On a shared store, for the "
                + "whole fleet.",
            "--by agent breaks the figures down by agent (a named HTTP token, an MCP client, cli); --by tool by tool.",
            "--zero sets the counters to zero (for the whole fleet on Redis) and keeps the entries.",
            "--watch shows them again every --interval seconds until Ctrl-C (exit 0): redrawn in place in a terminal, "
                + "else one block after another (with --format json, one object per line), with hits, misses, shared "
                + "and failed per second since the previous refresh. serve --http shows the same figures as a "
                + "dashboard at http://HOST:PORT/."})
final class StatsCommand extends StoreCommand {
    /** How the figures are printed. */
    enum Format {
        HUMAN, JSON, OPENMETRICS;

        static Format parse(String text) {
            try {
                return valueOf(text.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new UsageException("--format: unknown format '" + text + "' (choose one of "
                        + Arrays.stream(values()).map(f -> f.name().toLowerCase(Locale.ROOT)).collect(Collectors.joining(", "))
                        + ")");
            }
        }
    }

    /** Clears a terminal and puts the cursor home, so that each refresh draws over the last. */
    private static final String CLEAR = "\033[H\033[2J";
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss");

    private final Clock clock;
    private final Console console;

    @Option(names = "--format", paramLabel = "human|json|openmetrics",
            description = "human (a table), json (one object) or openmetrics (the Prometheus/OpenMetrics text format, "
                    + "for scrapers). Default: ${DEFAULT-VALUE}.", defaultValue = "human")
    String format;

    @Option(names = "--json", description = "Same as --format json. Default: false.")
    boolean json;

    @Option(names = "--by", paramLabel = "agent|tool",
            description = "One row per agent (who asked: a named HTTP token, else the MCP client's name, cli for execache "
                    + "run) or per tool, as a table or with --format json; openmetrics always has both. Default: totals.")
    String by;

    @Option(names = "--zero", description = "Set every counter to zero, in total and per tool (for the whole fleet on "
            + "Redis), and count from now; entries are kept. Default: false.")
    boolean zero;

    @Option(names = "--watch", description = "Show the figures again every --interval seconds until Ctrl-C: redrawn "
            + "in place in a terminal, else one block after another. Default: false.")
    boolean watch;

    @Option(names = "--interval", paramLabel = "SECONDS", description = "How often --watch refreshes, in seconds "
            + "(0.1 or more). Default: ${DEFAULT-VALUE}.", defaultValue = "2")
    double interval;

    /** For scripts and tests: stop after this many refreshes. */
    @Option(names = "--count", hidden = true, defaultValue = "0")
    int count;

    @Inject
    StatsCommand(SessionFactory sessions, Clock clock, Console console) {
        super(sessions);
        this.clock = clock;
        this.console = console;
    }

    private Format chosen() {
        return json ? Format.JSON : Format.parse(format);
    }

    @Override
    void checkOptions() {
        Format chosen = chosen();
        if (by != null && !by.equals("agent") && !by.equals("tool")) {
            throw new UsageException("--by: unknown breakdown '" + by + "' (choose agent or tool)");
        }
        if (by != null && zero) {
            throw new UsageException("--by and --zero do not go together: --zero sets every counter to zero");
        }
        if (watch && zero) {
            throw new UsageException("--watch and --zero do not go together: zero the counters first, then watch");
        }
        if (watch && chosen == Format.OPENMETRICS) {
            throw new UsageException("--watch shows the human or json format; a scraper reads openmetrics from "
                    + "serve --http's /metrics");
        }
        if (!(interval >= 0.1) || interval > 86_400) {
            throw new UsageException("--interval: give seconds from 0.1 to 86400, not " + interval);
        }
        if (count < 0) {
            throw new UsageException("--count: give 0 (until Ctrl-C) or more, not " + count);
        }
    }

    @Override
    int run(Session session, PrintWriter out) {
        StoreDescription store = StoreDescription.of(session.settings());
        if (zero) {
            try {
                session.store().counters().zero();
            } catch (RuntimeException e) {
                throw storeFailed(session, e);
            }
            out.println("counters set to zero; entries kept");
            return ExitCode.OK;
        }
        if (watch) {
            return watch(session, out, store);
        }
        CacheStats stats = session.executor().policy().stats();
        if (by != null && chosen() != Format.OPENMETRICS) {
            Map<String, ToolStats> rows = by.equals("agent") ? stats.agents() : stats.tools();
            if (chosen() == Format.JSON) {
                ObjectNode node = Json.MAPPER.createObjectNode();
                ObjectNode each = node.putObject(by.equals("agent") ? "agents" : "tools");
                rows.forEach((name, counted) -> each.set(name, Json.agent(counted)));
                out.println(Json.write(node));
            } else {
                table(out, by, rows);
            }
            return ExitCode.OK;
        }
        switch (chosen()) {
            case JSON -> {
                ObjectNode node = Json.MAPPER.createObjectNode();
                store.putInto(node);
                node.setAll(Json.stats(stats));
                node.put("entriesEstimatedBecause", entriesEstimatedBecause(session).orElse(null));
                out.println(Json.write(node));
            }
            case OPENMETRICS -> out.print(OpenMetrics.write(stats, store, session.executor().policy().storeInOutage()));
            case HUMAN -> human(out, stats, store, entriesEstimatedBecause(session));
        }
        return ExitCode.OK;
    }

    /** Shows the figures every interval until Ctrl-C (or --count refreshes); Ctrl-C ends it with exit 0. */
    private int watch(Session session, PrintWriter out, StoreDescription store) {
        CountDownLatch stop = new CountDownLatch(1);
        SignalHandler previous = onInterrupt(stop);
        boolean redraw = console.terminal() && !"dumb".equals(System.getenv("TERM"));
        Duration every = Duration.ofMillis(Math.round(interval * 1000));
        CacheStats before = null;
        Instant beforeAt = null;
        try {
            for (int refresh = 1; count == 0 || refresh <= count; refresh++) {
                CacheStats stats = session.executor().policy().stats();
                Instant at = clock.instant();
                if (chosen() == Format.JSON) {
                    ObjectNode node = Json.MAPPER.createObjectNode();
                    node.put("at", at.toString());
                    store.putInto(node);
                    node.setAll(Json.stats(stats));
                    node.put("storeOutage", session.executor().policy().storeInOutage());
                    node.set("perSecond", perSecond(before, beforeAt, stats, at));
                    out.println(Json.write(node));
                } else {
                    out.print(redraw ? CLEAR : refresh > 1 ? System.lineSeparator() : "");
                    out.printf(Locale.ROOT, "execache stats at %s, every %s; Ctrl-C to stop%n",
                            LocalTime.ofInstant(at, ZoneId.systemDefault()).format(TIME),
                            BigDecimal.valueOf(interval).stripTrailingZeros().toPlainString() + " s");
                    if (session.executor().policy().storeInOutage()) {
                        out.println("the store is in an outage: runs go on uncached; figures are what could be read");
                    }
                    human(out, stats, store, entriesEstimatedBecause(session));
                    ObjectNode rates = perSecond(before, beforeAt, stats, at);
                    row(out, "per second", rates.isEmpty() ? "from the next refresh on"
                            : String.format(Locale.ROOT, "%.1f hits, %.1f misses, %.1f shared, %.1f failed",
                                    rates.get("hits").doubleValue(), rates.get("misses").doubleValue(),
                                    rates.get("shared").doubleValue(), rates.get("failed").doubleValue()));
                }
                out.flush();
                before = stats;
                beforeAt = at;
                if ((count == 0 || refresh < count) && stop.await(every.toMillis(), TimeUnit.MILLISECONDS)) {
                    break;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            if (previous != null) {
                Signal.handle(new Signal("INT"), previous);
            }
        }
        return ExitCode.OK;
    }

    /** Hits, misses, shared and failed per second between two readings; empty before the second. */
    private static ObjectNode perSecond(CacheStats before, Instant beforeAt, CacheStats now, Instant at) {
        ObjectNode node = Json.MAPPER.createObjectNode();
        double seconds = beforeAt == null ? 0 : Duration.between(beforeAt, at).toMillis() / 1000.0;
        if (before == null || seconds <= 0) {
            return node;
        }
        node.put("hits", Math.max(0, now.hits() - before.hits()) / seconds);
        node.put("misses", Math.max(0, now.misses() - before.misses()) / seconds);
        node.put("shared", Math.max(0, now.shared() - before.shared()) / seconds);
        node.put("failed", Math.max(0, now.failed() - before.failed()) / seconds);
        return node;
    }

    /**
     * Ctrl-C ends the watch as its way out (exit 0), not as a failure; the handler it replaced,
     * or null when the signal cannot be handled here.
     */
    private static SignalHandler onInterrupt(CountDownLatch stop) {
        try {
            return Signal.handle(new Signal("INT"), signal -> stop.countDown());
        } catch (IllegalArgumentException | UnsupportedOperationException e) {
            return null;
        }
    }

    /** Why the entries counted are an estimate: a Redis whose eviction policy may drop execache's indexes. */
    private static Optional<String> entriesEstimatedBecause(Session session) {
        return session.store() instanceof RedisCacheStore redis ? redis.entriesEstimatedBecause() : Optional.empty();
    }

    private void human(PrintWriter out, CacheStats stats, StoreDescription store, Optional<String> estimated) {
        row(out, "store", store.kind() + " " + (store.kind() == StoreKind.MEMORY ? "(this process only)" : store.location()));
        row(out, "limits", store.limits());
        row(out, "counting since", stats.countingSince() == null ? "unknown (counted before execache recorded it)"
                : stats.countingSince() + " (" + Entries.age(Duration.between(stats.countingSince(), clock.instant())) + " ago)");
        row(out, "calls", stats.calls() + " (runs and tool calls, however they were answered)");
        row(out, "hits", Long.toString(stats.hits()));
        row(out, "misses", stats.misses() + " (ran; not stored: " + stats.failed() + " failed, "
                + (stats.uncacheableTotal() - stats.uncacheable().getOrDefault("reads_unwatchable", 0L)) + " uncacheable)");
        row(out, "shared", Long.toString(stats.shared()));
        row(out, "revalidated", stats.revalidations() + " (stale runs whose tool calls answered as before: not run, saved "
                + Durations.human(stats.revalidationSaved()) + "); " + stats.revalidationsChanged()
                + " found an answer changed and ran");
        row(out, "failed", stats.failed() + " (errors and timeouts, never stored)");
        row(out, "uncacheable", stats.uncacheableTotal() + reasons(stats.uncacheable()));
        row(out, "bypassed", stats.bypassed() + " (caching off)");
        row(out, "hit rate", String.format(Locale.ROOT, "%.1f%%", stats.hitRate() * 100));
        row(out, "saved, total", Durations.human(stats.totalSaved()));
        row(out, "saved, per hit", Durations.human(stats.averageSaved()));
        row(out, "kept out", Output.bytes(stats.keptOutBytes()) + " (about " + stats.keptOutTokens()
                + " tokens, at 4 bytes a token) of agents' contexts; code consumed " + Output.bytes(stats.toolAnswerBytes())
                + " of tool answers");
        row(out, "entries", stats.entries() + estimated.map(why -> ", an estimate: " + why).orElse("")
                + " (about " + Output.bytes(stats.estimatedBytes()) + ")");
        row(out, "evictions", Long.toString(stats.evictions()));
        row(out, "expirations", Long.toString(stats.expirations()));
        row(out, "invalidations", stats.invalidations() + " (by cause: " + stats.removalsByCause().entrySet().stream()
                .filter(cause -> !cause.getKey().equals("expiry"))
                .map(cause -> cause.getKey() + " " + cause.getValue()).collect(Collectors.joining(", ")) + ")");
        row(out, "store errors", Long.toString(stats.storeErrors()));
        row(out, "damaged", stats.damaged() + " (failed their checksum or signature; removed, never served)");
        if (!stats.tools().isEmpty()) {
            out.println("tool calls (included above):");
            stats.tools().forEach((tool, counted) -> {
                out.printf(Locale.ROOT, "  %-14s %d calls, %d hits, %d misses, hit rate %.1f%%, saved %s", tool,
                        counted.calls(), counted.hits(), counted.misses(), counted.hitRate() * 100,
                        Durations.human(counted.saved()));
                for (Map.Entry<String, Long> other : Map.of("shared", counted.shared(), "failed", counted.failed(),
                        "uncacheable", counted.uncacheable(), "bypassed", counted.bypassed(),
                        "invalidations", counted.invalidations()).entrySet().stream()
                        .sorted(Map.Entry.comparingByKey()).toList()) {
                    if (other.getValue() > 0) {
                        out.printf(Locale.ROOT, ", %d %s", other.getValue(), other.getKey());
                    }
                }
                if (counted.toolAnswerBytes() > 0) {
                    out.print(", " + Output.bytes(counted.toolAnswerBytes()) + " of answers to code");
                }
                out.println();
            });
        }
    }

    /** One row per agent or tool, the busiest first: calls, hit rate, time saved, context kept out. */
    private static void table(PrintWriter out, String by, Map<String, ToolStats> rows) {
        if (rows.isEmpty()) {
            out.println("no " + (by.equals("agent") ? "agent" : "tool") + " has been counted yet");
            return;
        }
        int width = Math.max(by.length(), rows.keySet().stream().mapToInt(String::length).max().orElse(0));
        String layout = "%-" + width + "s %8s %8s %8s %9s %10s %12s %10s%n";
        out.printf(Locale.ROOT, layout, by.toUpperCase(Locale.ROOT), "HITS", "MISSES", "HIT RATE", "SHARED", "SAVED",
                by.equals("agent") ? "KEPT OUT" : "TO CODE", by.equals("agent") ? "~TOKENS" : "");
        rows.entrySet().stream()
                .sorted(Comparator.comparingLong((Map.Entry<String, ToolStats> row) -> row.getValue().hits()
                        + row.getValue().misses()).reversed().thenComparing(Map.Entry::getKey))
                .forEach(row -> {
                    ToolStats counted = row.getValue();
                    long keptOut = by.equals("agent") ? counted.keptOutBytes() : counted.toolAnswerBytes();
                    out.printf(Locale.ROOT, layout, row.getKey(), counted.hits(), counted.misses(),
                            String.format(Locale.ROOT, "%.1f%%", counted.hitRate() * 100), counted.shared(),
                            Durations.human(counted.saved()), Output.bytes(keptOut),
                            by.equals("agent") ? Long.toString(KeptOut.estimatedTokens(keptOut)) : "");
                });
        if (by.equals("tool")) {
            out.println("TO CODE: bytes of the tool's answers that code consumed (kept out of the agent's context with the"
                    + " rest of the run)");
        } else {
            out.println("KEPT OUT: tool answers the agent's runs consumed minus the results they returned; ~TOKENS = bytes / 4");
        }
    }

    /** The reasons that counted, e.g. {@code  (nondeterministic 2, mutating_tool 1)}; nothing when none did. */
    private static String reasons(Map<String, Long> byReason) {
        String counted = byReason.entrySet().stream().filter(reason -> reason.getValue() > 0)
                .map(reason -> reason.getKey() + " " + reason.getValue()).collect(Collectors.joining(", "));
        return counted.isEmpty() ? "" : " (" + counted + ")";
    }

    private static void row(PrintWriter out, String name, String value) {
        out.printf(Locale.ROOT, "%-16s %s%n", name, value);
    }
}
