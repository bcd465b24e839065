package dev.execache.store.redis;

import dev.execache.core.spi.Counter;
import dev.execache.core.spi.StoreCounters;
import dev.execache.store.redis.KeyLayout.Partition;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import org.redisson.api.RScript;
import org.redisson.client.codec.StringCodec;

/**
 * The figures kept beside the entries, in every partition's counters hash: a partition's scripts
 * count what they evict and expire there, and the counts a caller adds go to a partition picked
 * at random among those that answer, so that no master takes every count of the fleet. What the
 * store reports is their sum; see {@link StoreCounters}.
 *
 * <p>Each partition counts at most {@link StoreCounters#MAX_AGENTS} agents by name (decided in
 * its script, so atomically for the fleet); the sum over the partitions names the first
 * {@code MAX_AGENTS} of them in name order and counts the rest as {@link StoreCounters#OTHER_AGENT}.
 */
final class RedisCounters implements StoreCounters {
    private final RedisCalls calls;
    private final KeyLayout layout;
    private final Clock clock;

    RedisCounters(RedisCalls calls, KeyLayout layout, Clock clock) {
        this.calls = calls;
        this.layout = layout;
        this.clock = clock;
    }

    @Override
    public void increment(String tool, String agent, Map<Counter, Long> deltas) {
        if (deltas.isEmpty()) {
            return;
        }
        List<Object> args = new ArrayList<>(List.of(agent == null ? "" : agent, Integer.toString(MAX_AGENTS),
                OTHER_AGENT, Integer.toString(deltas.size() * (tool == null ? 1 : 2))));
        deltas.forEach((counter, delta) -> {
            args.add(counter.name());
            args.add(Long.toString(delta));
            if (tool != null) {
                args.add(StoreCounters.toolRow(counter, tool));
                args.add(Long.toString(delta));
            }
        });
        if (agent != null) {
            deltas.forEach((counter, delta) -> {
                args.add(counter.name());
                args.add(Long.toString(delta));
            });
        }
        Object[] values = args.toArray();
        // a partition that fails in a partial outage hands the counts on to another that answers
        for (int tries = 1; ; tries++) {
            Partition partition = anyAnswering();
            try {
                calls.run(partition, clock.millis(), Scripts.INCREMENT_ALL, RScript.ReturnType.LONG, values);
                return;
            } catch (RedisStoreException e) {
                if (!calls.absorbs(partition, e) || tries >= layout.used()) {
                    throw e;
                }
            }
        }
    }

    /** A used partition at random, among those that answer if any does. */
    private Partition anyAnswering() {
        List<Partition> used = layout.usedPartitions();
        List<Partition> answering = used.stream().filter(calls::answers).toList();
        List<Partition> from = answering.isEmpty() ? used : answering;
        return from.get(ThreadLocalRandom.current().nextInt(from.size()));
    }

    /** Every partition's counters hash, those that do not answer during a partial outage left out. */
    private List<Map<String, String>> stored() {
        return calls.everywhere(layout.all(), true, partition -> calls.redisson()
                .<String, String>getMap(partition.counters(), StringCodec.INSTANCE).readAllMapAsync())
                .stream().filter(Objects::nonNull).toList();
    }

    @Override
    public Map<String, Map<Counter, Long>> perAgent() {
        Map<String, Map<Counter, Long>> byAgent = new TreeMap<>();
        for (Map<String, String> stored : stored()) {
            addRows(stored, AGENT_ROW, byAgent);
        }
        Map<String, Map<Counter, Long>> capped = new TreeMap<>();
        Map<Counter, Long> other = byAgent.remove(OTHER_AGENT);
        for (Map.Entry<String, Map<Counter, Long>> agent : byAgent.entrySet()) {
            if (capped.size() < MAX_AGENTS) {
                capped.put(agent.getKey(), agent.getValue());
            } else {
                other = other == null ? StoreCounters.noCounts() : other;
                Map<Counter, Long> folded = other;
                agent.getValue().forEach((counter, count) -> folded.merge(counter, count, Long::sum));
            }
        }
        if (other != null) {
            capped.put(OTHER_AGENT, other);
        }
        return capped;
    }

    @Override
    public Map<Counter, Long> totals() {
        Map<Counter, Long> counters = StoreCounters.noCounts();
        for (Map<String, String> stored : stored()) {
            for (Counter counter : Counter.values()) {
                String value = stored.get(counter.name());
                if (value != null) {
                    counters.merge(counter, Long.parseLong(value), Long::sum);
                }
            }
        }
        return counters;
    }

    @Override
    public Map<String, Map<Counter, Long>> perTool() {
        Map<String, Map<Counter, Long>> byTool = new TreeMap<>();
        for (Map<String, String> stored : stored()) {
            addRows(stored, TOOL_ROW, byTool);
        }
        return byTool;
    }

    /**
     * Adds the fields {@code <prefix><COUNTER>:<name>} of one counters hash to {@code byName} (an
     * agent's fields are written by {@link Scripts#INCREMENT_ALL}, which names them alike).
     */
    private static void addRows(Map<String, String> stored, String prefix, Map<String, Map<Counter, Long>> byName) {
        stored.forEach((field, value) -> {
            if (field.startsWith(prefix)) {
                StoreCounters.addRow(field, Long.parseLong(value), prefix, byName);
            }
        });
    }

    @Override
    public void zero() {
        long now = clock.millis();
        calls.everywhere(layout.all(), false, partition -> calls.eval(partition, now, Scripts.ZERO_COUNTERS,
                RScript.ReturnType.LONG));
    }

    /** The earliest {@code since} of the partitions. */
    @Override
    public Optional<Instant> countingSince() {
        return stored().stream().map(stored -> stored.get("since")).filter(Objects::nonNull)
                .map(since -> Instant.ofEpochMilli(Long.parseLong(since))).min(Instant::compareTo);
    }
}
