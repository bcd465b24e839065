package dev.execache.mcp.server.http;

import dev.execache.gateway.Json;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.core.CacheStats;
import dev.execache.core.KeptOut;
import dev.execache.core.CachedExecutor;
import dev.execache.core.ToolStats;
import dev.execache.core.spi.ToolCatalog;
import dev.execache.mcp.server.http.FigureHistory.Step;
import dev.execache.mcp.server.http.FigureHistory.Totals;
import java.lang.System.Logger.Level;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The figures the dashboard at {@code /} shows, as one JSON document ({@code /dashboard.json}):
 * the store's totals (fleet-wide on a shared store), what happened in each 10 s of the last
 * hour and each minute of the last day, the rates of the last seconds, the top tools and
 * agents, the store's health and its bounds.
 */
final class Dashboard implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("dev.execache.mcp.server");
    static final Duration SAMPLE_EVERY = Duration.ofSeconds(10);
    /** Tokens are estimated as bytes / 4, the usual rule of thumb for English text and JSON. */
    static final int BYTES_PER_TOKEN = KeptOut.BYTES_PER_TOKEN;
    private static final Duration RECENT = Duration.ofMinutes(10);
    /** A page open in many browsers reads the store once a second at most. */
    private static final Duration READ_AT_MOST_EVERY = Duration.ofSeconds(1);
    private static final int TOP = 10;

    private final CachedExecutor executor;
    private final ObjectNode store;
    private final String version;
    private final Supplier<List<ToolCatalog.ServerStatus>> servers;
    private final Clock clock;
    private final FigureHistory lastHour = new FigureHistory(SAMPLE_EVERY, 360);
    private final FigureHistory lastDay = new FigureHistory(Duration.ofMinutes(1), 1440);
    private final ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor(task -> {
        Thread thread = new Thread(task, "execache-dashboard-sampler");
        thread.setDaemon(true);
        return thread;
    });
    private Reading last;

    private record Reading(Instant at, CacheStats stats, boolean outage) {
    }

    /**
     * @param servers the downstream servers' states (none without a gateway): a person sees which
     *     are still starting and why one is unavailable
     */
    Dashboard(CachedExecutor executor, ObjectNode store, String version, Supplier<List<ToolCatalog.ServerStatus>> servers,
            Clock clock) {
        this.executor = executor;
        this.servers = servers;
        this.store = store.deepCopy();
        this.version = version;
        this.clock = clock;
    }

    Dashboard start() {
        sampler.scheduleAtFixedRate(this::sample, 0, SAMPLE_EVERY.toMillis(), TimeUnit.MILLISECONDS);
        return this;
    }

    private void sample() {
        try {
            read(true);
        } catch (RuntimeException e) {
            LOG.log(Level.DEBUG, "reading the figures for the dashboard failed: " + e);
        }
    }

    /** The figures now: read from the store unless read less than a second ago (or {@code fresh}). */
    private synchronized Reading read(boolean fresh) {
        Instant now = clock.instant();
        if (fresh || last == null || Duration.between(last.at(), now).compareTo(READ_AT_MOST_EVERY) >= 0) {
            last = new Reading(now, executor.policy().stats(), executor.policy().storeInOutage());
            Totals totals = totals(last.stats());
            lastHour.observe(now, totals);
            lastDay.observe(now, totals);
        }
        return last;
    }

    static Totals totals(CacheStats stats) {
        return new Totals(stats.hits(), stats.misses(), stats.shared(), stats.failed(), stats.totalSaved().toNanos());
    }

    /** The figures of each agent (an MCP client's name, or over HTTP its token's name). */
    static List<AgentFigures> agentFigures(CacheStats stats) {
        return stats.agents().entrySet().stream()
                .map(agent -> new AgentFigures(agent.getKey(), agent.getValue().hits(), agent.getValue().misses(),
                        agent.getValue().shared(), agent.getValue().failed(), agent.getValue().saved(),
                        calls(agent.getValue())))
                .toList();
    }

    /**
     * Bytes of tool answers that code read but did not return to the agent: what code mode kept
     * out of the agent's context.
     */
    static Long keptOutBytes(CacheStats stats) {
        return stats.keptOutBytes();
    }

    /** One agent's figures, as the dashboard lists them. */
    record AgentFigures(String name, long hits, long misses, long shared, long failed, Duration saved, long calls) {
    }

    /** The dashboard's document. */
    ObjectNode json() {
        Reading reading = read(false);
        CacheStats stats = reading.stats();
        Instant now = reading.at();
        ObjectNode node = Json.MAPPER.createObjectNode();
        node.put("version", version);
        node.put("at", now.toString());
        ArrayNode serverStates = node.putArray("servers");
        for (ToolCatalog.ServerStatus server : servers.get()) {
            ObjectNode each = serverStates.addObject();
            each.put("name", server.name());
            each.put("state", server.state().name().toLowerCase(Locale.ROOT));
            each.put("tools", server.tools());
            if (server.reason() != null) {
                each.put("reason", server.reason());
            }
        }
        node.set("store", store.deepCopy());
        ObjectNode health = node.putObject("health");
        health.put("outage", reading.outage());
        health.put("storeErrors", stats.storeErrors());
        health.put("damaged", stats.damaged());
        health.put("evictions", stats.evictions());
        health.put("expirations", stats.expirations());
        health.put("invalidations", stats.invalidations());
        ObjectNode byCause = health.putObject("removalsByCause");
        stats.removalsByCause().forEach(byCause::put);
        if (reading.outage()) {
            health.put("says", "the store is not answering as it should: runs go on uncached, and the figures are "
                    + "what could still be read plus what this server counted meanwhile");
        }
        ObjectNode counted = Json.stats(stats);
        counted.remove("tools");
        counted.put("calls", Math.max(stats.calls(), stats.hits() + stats.misses() + stats.shared()
                + stats.revalidations()));
        node.set("totals", counted);

        Totals totals = totals(stats);
        Step sinceHour = lastHour.sinceLast(now, totals);
        List<Step> hourSteps = lastHour.steps();
        node.set("perSecond", perSecond(hourSteps, sinceHour));
        node.set("recent", recent(hourSteps, sinceHour));
        ObjectNode series = node.putObject("series");
        series.set("lastHour", series(lastHour, hourSteps, sinceHour));
        series.set("lastDay", series(lastDay, lastDay.steps(), lastDay.sinceLast(now, totals)));

        ArrayNode tools = node.putArray("tools");
        stats.tools().entrySet().stream()
                .sorted(Comparator.comparingLong((Map.Entry<String, ToolStats> tool) -> calls(tool.getValue())).reversed()
                        .thenComparing(Map.Entry::getKey))
                .limit(TOP * 5L)
                .forEach(tool -> figures(tools.addObject(), tool.getKey(), tool.getValue().hits(), tool.getValue().misses(),
                        tool.getValue().shared(), tool.getValue().failed(), tool.getValue().saved(), calls(tool.getValue())));
        ArrayNode agents = node.putArray("agents");
        agentFigures(stats).stream()
                .sorted(Comparator.comparingLong(AgentFigures::calls).reversed().thenComparing(AgentFigures::name))
                .limit(TOP * 5L)
                .forEach(agent -> figures(agents.addObject(), agent.name(), agent.hits(), agent.misses(), agent.shared(),
                        agent.failed(), agent.saved(), agent.calls()));

        ObjectNode keptOut = node.putObject("keptOut");
        Long bytes = keptOutBytes(stats);
        if (bytes == null) {
            keptOut.putNull("bytes");
            keptOut.putNull("estimatedTokens");
        } else {
            keptOut.put("bytes", bytes);
            keptOut.put("estimatedTokens", KeptOut.estimatedTokens(bytes));
        }
        keptOut.put("bytesPerToken", BYTES_PER_TOKEN);
        return node;
    }

    /**
     * Every call of a tool (or an agent's runs and calls), cached or not; a store counted before calls
     * were counted gives its lookups.
     */
    private static long calls(ToolStats tool) {
        return Math.max(tool.calls(), tool.hits() + tool.misses() + tool.shared());
    }

    private static void figures(ObjectNode node, String name, long hits, long misses, long shared, long failed,
            Duration saved, long calls) {
        node.put("name", name);
        node.put("calls", calls);
        node.put("hits", hits);
        node.put("misses", misses);
        node.put("shared", shared);
        node.put("failed", failed);
        node.put("hitRate", hits + misses == 0 ? 0 : (double) hits / (hits + misses));
        node.put("savedMs", Json.millis(saved));
    }

    /** Hits, misses, shared and failed per second over the last full step and the time since. */
    private static ObjectNode perSecond(List<Step> steps, Step since) {
        Totals counted = new Totals(0, 0, 0, 0, 0);
        double seconds = 0;
        if (!steps.isEmpty()) {
            Step lastStep = steps.get(steps.size() - 1);
            counted = plus(counted, lastStep.counted());
            seconds += lastStep.seconds();
        }
        if (since != null) {
            counted = plus(counted, since.counted());
            seconds += since.seconds();
        }
        ObjectNode node = Json.MAPPER.createObjectNode();
        node.put("overSeconds", seconds);
        node.put("hits", seconds == 0 ? 0 : counted.hits() / seconds);
        node.put("misses", seconds == 0 ? 0 : counted.misses() / seconds);
        node.put("shared", seconds == 0 ? 0 : counted.shared() / seconds);
        node.put("failed", seconds == 0 ? 0 : counted.failed() / seconds);
        return node;
    }

    /** Hit rate and time saved over the last ten minutes (or as much of them as this server has seen). */
    private static ObjectNode recent(List<Step> steps, Step since) {
        Totals counted = since == null ? new Totals(0, 0, 0, 0, 0) : since.counted();
        double seconds = since == null ? 0 : since.seconds();
        for (int i = steps.size() - 1; i >= 0 && seconds < RECENT.toSeconds(); i--) {
            counted = plus(counted, steps.get(i).counted());
            seconds += steps.get(i).seconds();
        }
        ObjectNode node = Json.MAPPER.createObjectNode();
        node.put("overSeconds", seconds);
        node.put("hits", counted.hits());
        node.put("misses", counted.misses());
        long lookups = counted.hits() + counted.misses();
        node.put("hitRate", lookups == 0 ? 0 : (double) counted.hits() / lookups);
        node.put("savedMs", counted.savedNanos() / 1e6);
        return node;
    }

    private static Totals plus(Totals a, Totals b) {
        return new Totals(a.hits() + b.hits(), a.misses() + b.misses(), a.shared() + b.shared(), a.failed() + b.failed(),
                a.savedNanos() + b.savedNanos());
    }

    private static ObjectNode series(FigureHistory history, List<Step> steps, Step since) {
        ObjectNode node = Json.MAPPER.createObjectNode();
        node.put("stepSeconds", history.step().toSeconds());
        node.put("capacity", history.capacity());
        ArrayNode points = node.putArray("points");
        steps.forEach(step -> point(points.addObject(), step));
        if (since != null) {
            point(node.putObject("current"), since);
        }
        return node;
    }

    private static void point(ObjectNode node, Step step) {
        node.put("start", step.start().toEpochMilli());
        node.put("seconds", step.seconds());
        node.put("hits", step.counted().hits());
        node.put("misses", step.counted().misses());
        node.put("shared", step.counted().shared());
        node.put("failed", step.counted().failed());
        node.put("savedMs", step.counted().savedNanos() / 1e6);
    }

    @Override
    public void close() {
        sampler.shutdownNow();
    }
}
