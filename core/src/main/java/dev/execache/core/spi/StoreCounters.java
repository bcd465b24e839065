package dev.execache.core.spi;

import java.time.Instant;
import java.util.Collection;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;

/**
 * The figures a store keeps beside its entries: counted on every call, read by stats, and
 * fleet-wide for a shared store. Behind {@link CacheStore#counters()}, as Caffeine keeps its rare
 * operations behind {@code policy()}, so that a decorator of a store passes them on in one line.
 */
public interface StoreCounters {

    /**
     * How many agents a store counts apart, at most; the calls of any further agent are counted
     * under {@link #OTHER_AGENT}, so that clients that invent names cannot grow the store.
     */
    int MAX_AGENTS = 50;

    /** The agent under which the calls of agents past {@link #MAX_AGENTS} are counted. */
    String OTHER_AGENT = "other";

    /**
     * How a store that keeps its counters as named values (a table's rows, a hash's fields) names
     * a tool's own: {@code tool:<COUNTER>:<tool>}; a total is the counter's name alone.
     */
    String TOOL_ROW = "tool:";

    /** As {@link #TOOL_ROW}, for an agent's own counters: {@code agent:<COUNTER>:<agent>}. */
    String AGENT_ROW = "agent:";

    static String toolRow(Counter counter, String tool) {
        return TOOL_ROW + counter.name() + ":" + tool;
    }

    static String agentRow(Counter counter, String agent) {
        return AGENT_ROW + counter.name() + ":" + agent;
    }

    /**
     * Adds {@code value} to {@code byName} if {@code row} is named {@code <prefix><COUNTER>:<name>}
     * ({@link #TOOL_ROW} or {@link #AGENT_ROW}) for a counter this execache knows; other rows are left out.
     */
    static void addRow(String row, long value, String prefix, Map<String, Map<Counter, Long>> byName) {
        if (!row.startsWith(prefix)) {
            return;
        }
        int colon = row.indexOf(':', prefix.length());
        if (colon < 0) {
            return;
        }
        Counter.named(row.substring(prefix.length(), colon)).ifPresent(counter -> byName
                .computeIfAbsent(row.substring(colon + 1), name -> noCounts())
                .merge(counter, value, Long::sum));
    }

    /** The name in a row named {@code <prefix><COUNTER>:<name>}. */
    static String nameInRow(String row, String prefix) {
        return row.substring(row.indexOf(':', prefix.length()) + 1);
    }

    /** Every counter at zero, in a map the caller may change. */
    static Map<Counter, Long> noCounts() {
        Map<Counter, Long> counts = new EnumMap<>(Counter.class);
        for (Counter counter : Counter.values()) {
            counts.put(counter, 0L);
        }
        return counts;
    }

    /**
     * The name {@code agent}'s calls are counted under, given the agents counted so far
     * ({@link #OTHER_AGENT} among them or not): its own if it is counted already or fewer than
     * {@link #MAX_AGENTS} others are counted by name, else {@link #OTHER_AGENT}.
     */
    static String countedAs(Collection<String> counted, String agent) {
        if (counted.contains(agent) || agent.equals(OTHER_AGENT)) {
            return agent;
        }
        long named = counted.stream().filter(name -> !name.equals(OTHER_AGENT)).count();
        return named < MAX_AGENTS ? agent : OTHER_AGENT;
    }

    /**
     * Adds to several counters at once (a store over the network does it in one round trip):
     * to the totals, unless {@code tool} is null to that tool's own counters too, and unless
     * {@code agent} is null to that agent's. An agent the store does not count yet while it counts
     * {@link #MAX_AGENTS} already is counted as {@link #OTHER_AGENT} (decided atomically on a
     * shared store).
     */
    void increment(String tool, String agent, Map<Counter, Long> deltas);

    default void increment(String tool, Map<Counter, Long> deltas) {
        increment(tool, null, deltas);
    }

    default void increment(Counter counter, long delta) {
        increment(null, null, Map.of(counter, delta));
    }

    default void increment(Map<Counter, Long> deltas) {
        increment(null, null, deltas);
    }

    /** Every counter in total, zero for those never incremented. */
    Map<Counter, Long> totals();

    /** The counters of each tool that was ever counted, by tool name (sorted). */
    Map<String, Map<Counter, Long>> perTool();

    /**
     * The counters of each agent that was ever counted, by agent name (sorted): at most
     * {@link #MAX_AGENTS} names and {@link #OTHER_AGENT}.
     */
    Map<String, Map<Counter, Long>> perAgent();

    /**
     * Sets every counter, in total, per tool and per agent, to zero (fleet-wide for a shared store) and
     * starts counting anew from the clock's now, forgetting the agents it counted. Entries and
     * last-seen versions stay.
     */
    void zero();

    /**
     * When the counters started: when the store first counted (its creation) or was last
     * zeroed; empty if nothing has been counted yet or the store does not know (counted by an
     * execache that did not record it).
     */
    Optional<Instant> countingSince();
}
