package dev.execache.store.sqlite;

import dev.execache.core.spi.Counter;
import dev.execache.core.spi.StoreCounters;
import java.time.Clock;
import java.time.Instant;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.jdbi.v3.core.Handle;

/**
 * The figures kept beside the entries, in the file's {@code counters} table, one row per counter
 * as {@link StoreCounters} names them: every process on the file adds to the same rows. Counts are
 * written behind, as hits are ({@link WriteBehind}); what is read has what is unwritten added.
 */
final class SqliteCounters implements StoreCounters {
    private static final String ADD_TO_COUNTER = """
            INSERT INTO counters (name, value) VALUES (?, ?)
            ON CONFLICT (name) DO UPDATE SET value = value + excluded.value""";
    /**
     * The row {@code since} holds when counting started (epoch ms): written with the first counts
     * of an empty table and at a zeroing of the counters. A file whose counts predate it has none.
     */
    private static final String SINCE = "since";
    private static final String START_COUNTING =
            "INSERT INTO counters (name, value) SELECT ?, ? WHERE NOT EXISTS (SELECT 1 FROM counters)";

    private final OpenFile file;
    private final WriteBehind writeBehind;
    private final Clock clock;

    SqliteCounters(OpenFile file, WriteBehind writeBehind, Clock clock) {
        this.file = file;
        this.writeBehind = writeBehind;
        this.clock = clock;
    }

    /** Notes when counting started, if nothing was counted in the file yet; in a write's transaction. */
    static void startCounting(Handle handle, long since) {
        handle.execute(START_COUNTING, SINCE, since);
    }

    static void add(Handle handle, Counter counter, long delta) {
        if (delta != 0) {
            handle.execute(ADD_TO_COUNTER, counter.name(), delta);
        }
    }

    /**
     * Adds counts by row name, in a write's transaction: an agent's row goes to
     * {@link StoreCounters#OTHER_AGENT}'s when the file counts {@link StoreCounters#MAX_AGENTS}
     * others already (another process may have counted them since the counts were noted).
     */
    static void addRows(Handle handle, Map<String, Long> counts) {
        Set<String> inFile = agentsIn(handle);
        counts.forEach((row, delta) -> {
            if (delta != 0) {
                handle.execute(ADD_TO_COUNTER, cappedAgentRow(row, inFile), delta);
            }
        });
    }

    /** The agents whose counters the file holds. */
    private static Set<String> agentsIn(Handle handle) {
        Set<String> agents = new HashSet<>();
        handle.createQuery("SELECT name FROM counters WHERE name LIKE ?").bind(0, AGENT_ROW + "%")
                .mapTo(String.class)
                .forEach(row -> agents.add(StoreCounters.nameInRow(row, AGENT_ROW)));
        return agents;
    }

    private static String cappedAgentRow(String row, Set<String> inFile) {
        if (!row.startsWith(AGENT_ROW)) {
            return row;
        }
        String agent = StoreCounters.nameInRow(row, AGENT_ROW);
        String countedAs = StoreCounters.countedAs(inFile, agent);
        inFile.add(countedAs);
        return row.substring(0, row.length() - agent.length()) + countedAs;
    }

    /**
     * Counts are written behind, as hits are; a write in the background that failed is told
     * here, once, as a failed write of the caller's own would be.
     */
    @Override
    public void increment(String tool, String agent, Map<Counter, Long> deltas) {
        long now = clock.millis();
        writeBehind.noteCounts(tool, agent, deltas, now,
                () -> file.read("the counted agents", reader -> reader.jdbi().withHandle(SqliteCounters::agentsIn)));
        writeBehind.writeIfDue(now);
        writeBehind.throwBackgroundFailure();
    }

    /** Every counter row, with what is unwritten added. */
    private Map<String, Long> rows() {
        return writeBehind.withUnwritten("the counters",
                reader -> reader.jdbi().withHandle(handle -> handle.createQuery("SELECT name, value FROM counters")
                        .map((row, context) -> Map.entry(row.getString(1), row.getLong(2)))
                        .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue))),
                writeBehind::withUnwrittenCounts);
    }

    @Override
    public Map<Counter, Long> totals() {
        Map<String, Long> rows = rows();
        Map<Counter, Long> counters = StoreCounters.noCounts();
        counters.replaceAll((counter, zero) -> rows.getOrDefault(counter.name(), 0L));
        return counters;
    }

    @Override
    public Map<String, Map<Counter, Long>> perTool() {
        Map<String, Map<Counter, Long>> byTool = new TreeMap<>();
        rows().forEach((row, value) -> StoreCounters.addRow(row, value, TOOL_ROW, byTool));
        return byTool;
    }

    @Override
    public Map<String, Map<Counter, Long>> perAgent() {
        Map<String, Map<Counter, Long>> byAgent = new TreeMap<>();
        rows().forEach((row, value) -> StoreCounters.addRow(row, value, AGENT_ROW, byAgent));
        return byAgent;
    }

    @Override
    public void zero() {
        long now = clock.millis();
        writeBehind.write(handle -> {
            handle.execute("DELETE FROM counters");
            handle.execute(ADD_TO_COUNTER, SINCE, now);
            return null;
        });
    }

    @Override
    public Optional<Instant> countingSince() {
        record InFile(Optional<Long> since, long rows) {
        }
        return writeBehind.withUnwritten("when counting started", reader -> reader.jdbi().withHandle(handle -> new InFile(
                        handle.createQuery("SELECT value FROM counters WHERE name = ?").bind(0, SINCE)
                                .mapTo(Long.class).findOne(),
                        handle.createQuery("SELECT count(*) FROM counters").mapTo(Long.class).one())),
                inFile -> inFile.since().isEmpty() && inFile.rows() == 0 ? writeBehind.firstNotedAt() : inFile.since())
                .map(Instant::ofEpochMilli);
    }
}
