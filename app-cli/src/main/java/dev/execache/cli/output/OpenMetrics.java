package dev.execache.cli.output;

import dev.execache.core.CacheStats;
import dev.execache.core.ToolStats;
import java.time.Instant;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToLongFunction;

/**
 * The figures of {@code execache stats} in the OpenMetrics text format (the Prometheus
 * exposition format's successor), for scrapers and dashboards: every counter a family with the
 * {@code _total} suffix and, when the store says since when it counts, a {@code _created}
 * sample; the figures of each tool and of each agent in families of their own, labelled by
 * {@code tool} or {@code agent}, so that a sum over tools or agents never counts a call twice with the
 * totals. The writer is small and its output is
 * checked against the format's rules in {@code OpenMetricsTest}; the Prometheus Java client's
 * writers need its own registry and metric types for what is here a snapshot of a few numbers.
 */
public final class OpenMetrics {
    private final StringBuilder text = new StringBuilder();
    private final String created;

    private OpenMetrics(Instant countingSince) {
        this.created = countingSince == null ? null : seconds(countingSince);
    }

    public static String write(CacheStats stats, StoreDescription store) {
        return write(stats, store, false);
    }

    /**
     * @param storeOutage whether the store is in an outage: the figures are then what could still be read
     *     plus what this process counted meanwhile, and {@code execache_store_outage} says 1
     */
    public static String write(CacheStats stats, StoreDescription store, boolean storeOutage) {
        OpenMetrics out = new OpenMetrics(stats.countingSince());
        out.family("execache_store", "info", "The store the figures come from, where it is.", null);
        out.sample("execache_store_info", "store=" + quoted(store.kind().toString()) + ",location=" + quoted(store.location()), "1");
        out.gauge("execache_store_outage", "1 while the store is unreachable, slow or refusing writes (runs go on "
                + "uncached; the figures are what could be read plus what this process counted), else 0.",
                storeOutage ? "1" : "0");
        out.counter("execache_calls", "Runs and tool calls, however they were answered (looked up or not).", stats.calls());
        out.counter("execache_hits", "Lookups answered from the cache.", stats.hits());
        out.counter("execache_misses", "Lookups not answered from the cache: the run or call was made.", stats.misses());
        out.counter("execache_shared", "Calls answered by an identical run in flight (single flight).", stats.shared());
        out.counter("execache_revalidations", "Stale runs answered without running: their tool calls, asked again,"
                + " answered as before (neither hits nor misses).", stats.revalidations());
        out.counter("execache_revalidations_changed", "Stale runs whose tool calls, asked again, answered otherwise:"
                + " they ran again (counted as misses too).", stats.revalidationsChanged());
        out.family("execache_revalidation_saved_seconds", "counter", "Time revalidations saved: each run's own time less"
                + " its revalidation's.", "seconds");
        out.sample("execache_revalidation_saved_seconds_total", null, seconds(stats.revalidationSaved().toNanos()));
        out.createdSample("execache_revalidation_saved_seconds", null);
        out.counter("execache_failed", "Runs and calls that failed: never stored.", stats.failed());
        out.counter("execache_bypassed", "Runs and calls made with caching off.", stats.bypassed());
        out.family("execache_uncacheable", "counter", "Runs and calls not stored, by reason.", null);
        stats.uncacheable().forEach((reason, count) -> out.counterSample("execache_uncacheable", "reason=" + quoted(reason), count));
        out.family("execache_saved_seconds", "counter", "Latency saved by hits.", "seconds");
        out.sample("execache_saved_seconds_total", null, seconds(stats.totalSaved().toNanos()));
        out.createdSample("execache_saved_seconds", null);
        out.counter("execache_evictions", "Entries evicted to keep the store's bounds, or lost by the store itself.", stats.evictions());
        out.counter("execache_expirations", "Entries removed past their time to live.", stats.expirations());
        out.counter("execache_invalidations", "Entries removed before their expiry because what they depended on changed"
                + " (a write through execache, a new tool version, a resource update, by hand).", stats.invalidations());
        out.family("execache_removals", "counter", "Entries removed before a bound pushed them out, by cause: write, version,"
                + " resource, hand (the invalidations) and expiry.", null);
        stats.removalsByCause().forEach((cause, count) -> out.counterSample("execache_removals", "cause=" + quoted(cause), count));
        out.counter("execache_store_errors", "Store operations that failed; the run went on uncached.", stats.storeErrors());
        out.counter("execache_damaged", "Entries that failed their checksum or signature: removed, never served.", stats.damaged());
        out.gauge("execache_entries", "Live entries in the store.", Long.toString(stats.entries()));
        out.family("execache_estimated_bytes", "gauge", "Estimated size of the entries.", "bytes");
        out.sample("execache_estimated_bytes", null, Long.toString(stats.estimatedBytes()));
        out.gauge("execache_max_entries", "The store's bound on entries.", Integer.toString(store.maxEntries()));
        out.bytesCounter("execache_answer_bytes", "Bytes of tool answers code consumed.", null, stats.toolAnswerBytes());
        out.bytesCounter("execache_kept_out_bytes", "Bytes code mode kept out of agents' contexts: per run, tool answers"
                + " consumed minus the result returned; hits count the stored run's figure again.", null, stats.keptOutBytes());
        out.counter("execache_kept_out_tokens", "execache_kept_out_bytes / 4: an estimate in tokens.", stats.keptOutTokens());
        if (!stats.tools().isEmpty()) {
            out.toolCounter("execache_tool_calls", "Tool calls however they were answered, cached or not, by tool.",
                    stats.tools(), ToolStats::calls);
            out.toolCounter("execache_tool_hits", "Tool calls answered from the cache, by tool.", stats.tools(), ToolStats::hits);
            out.toolCounter("execache_tool_misses", "Tool calls made, by tool.", stats.tools(), ToolStats::misses);
            out.toolCounter("execache_tool_shared", "Tool calls answered by an identical call in flight, by tool.",
                    stats.tools(), ToolStats::shared);
            out.toolCounter("execache_tool_failed", "Tool calls that failed, by tool.", stats.tools(), ToolStats::failed);
            out.toolCounter("execache_tool_uncacheable", "Tool calls not cached as the tool may change something, by tool.",
                    stats.tools(), ToolStats::uncacheable);
            out.toolCounter("execache_tool_bypassed", "Tool calls made with caching off for the tool, by tool.",
                    stats.tools(), ToolStats::bypassed);
            out.toolCounter("execache_tool_invalidations", "Entries removed because the tool changed or was invalidated, by tool.",
                    stats.tools(), ToolStats::invalidations);
            out.family("execache_tool_saved_seconds", "counter", "Latency saved by hits of tool calls, by tool.", "seconds");
            stats.tools().forEach((tool, counted) -> {
                out.sample("execache_tool_saved_seconds_total", "tool=" + quoted(tool), seconds(counted.saved().toNanos()));
                out.createdSample("execache_tool_saved_seconds", "tool=" + quoted(tool));
            });
            out.family("execache_tool_answer_bytes", "counter", "Bytes of the tool's answers code consumed, by tool.", "bytes");
            stats.tools().forEach((tool, counted) ->
                    out.counterSample("execache_tool_answer_bytes", "tool=" + quoted(tool), counted.toolAnswerBytes()));
        }
        if (!stats.agents().isEmpty()) {
            Map<String, ToolStats> agents = stats.agents();
            out.labelledCounter("execache_agent_hits", "Runs and tool calls answered from the cache, by agent.", "agent",
                    agents, ToolStats::hits);
            out.labelledCounter("execache_agent_misses", "Runs and tool calls made, by agent.", "agent", agents,
                    ToolStats::misses);
            out.labelledCounter("execache_agent_shared", "Runs and tool calls answered by an identical one in flight, by"
                    + " agent.", "agent", agents, ToolStats::shared);
            out.labelledCounter("execache_agent_failed", "Runs and tool calls that failed, by agent.", "agent", agents,
                    ToolStats::failed);
            out.labelledCounter("execache_agent_uncacheable", "Runs and tool calls not stored, by agent.", "agent", agents,
                    ToolStats::uncacheable);
            out.labelledCounter("execache_agent_bypassed", "Runs and tool calls made with caching off, by agent.", "agent",
                    agents, ToolStats::bypassed);
            out.family("execache_agent_saved_seconds", "counter", "Latency saved by hits, by agent.", "seconds");
            agents.forEach((agent, counted) -> {
                out.sample("execache_agent_saved_seconds_total", "agent=" + quoted(agent), seconds(counted.saved().toNanos()));
                out.createdSample("execache_agent_saved_seconds", "agent=" + quoted(agent));
            });
            out.family("execache_agent_kept_out_bytes", "counter", "Bytes code mode kept out of the agent's context, by"
                    + " agent.", "bytes");
            agents.forEach((agent, counted) ->
                    out.counterSample("execache_agent_kept_out_bytes", "agent=" + quoted(agent), counted.keptOutBytes()));
        }
        out.text.append("# EOF\n");
        return out.text.toString();
    }

    private void counter(String name, String help, long value) {
        family(name, "counter", help, null);
        counterSample(name, null, value);
    }

    private void toolCounter(String name, String help, Map<String, ToolStats> tools, ToLongFunction<ToolStats> value) {
        labelledCounter(name, help, "tool", tools, value);
    }

    private void labelledCounter(String name, String help, String label, Map<String, ToolStats> figures,
            ToLongFunction<ToolStats> value) {
        family(name, "counter", help, null);
        figures.forEach((key, counted) -> counterSample(name, label + "=" + quoted(key), value.applyAsLong(counted)));
    }

    private void bytesCounter(String name, String help, String labels, long value) {
        family(name, "counter", help, "bytes");
        counterSample(name, labels, value);
    }

    private void counterSample(String name, String labels, long value) {
        sample(name + "_total", labels, Long.toString(value));
        createdSample(name, labels);
    }

    private void createdSample(String name, String labels) {
        if (created != null) {
            sample(name + "_created", labels, created);
        }
    }

    private void gauge(String name, String help, String value) {
        family(name, "gauge", help, null);
        sample(name, null, value);
    }

    private void family(String name, String type, String help, String unit) {
        text.append("# TYPE ").append(name).append(' ').append(type).append('\n');
        if (unit != null) {
            text.append("# UNIT ").append(name).append(' ').append(unit).append('\n');
        }
        text.append("# HELP ").append(name).append(' ').append(escape(help, false)).append('\n');
    }

    private void sample(String name, String labels, String value) {
        text.append(name);
        if (labels != null) {
            text.append('{').append(labels).append('}');
        }
        text.append(' ').append(value).append('\n');
    }

    private static String quoted(String value) {
        return '"' + escape(value, true) + '"';
    }

    /** The format's escapes: backslash and line feed, and in label values the double quote. */
    private static String escape(String value, boolean quote) {
        StringBuilder escaped = new StringBuilder(value.length());
        for (char c : value.toCharArray()) {
            switch (c) {
                case '\\' -> escaped.append("\\\\");
                case '\n' -> escaped.append("\\n");
                case '"' -> escaped.append(quote ? "\\\"" : "\"");
                default -> escaped.append(c);
            }
        }
        return escaped.toString();
    }

    private static String seconds(Instant instant) {
        return String.format(Locale.ROOT, "%.3f", instant.toEpochMilli() / 1000.0);
    }

    private static String seconds(long nanos) {
        return String.format(Locale.ROOT, "%.9f", nanos / 1e9);
    }
}
