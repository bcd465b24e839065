package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.cli.command.ExitCode;
import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.Counter;
import dev.execache.gateway.Json;
import dev.execache.store.sqlite.SqliteCacheStore;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code execache stats}: every counter, the store and its limits, --zero, and each --format. */
class StatsCommandTest {
    @TempDir
    Path dir;

    private Path db;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    @BeforeEach
    void fillAStore() {
        db = dir.resolve("cache.db");
        try (SqliteCacheStore store = new SqliteCacheStore(db, 100, Clock.systemUTC())) {
            Instant now = Instant.now();
            store.put(new CacheEntry("v1:a", "1", "", Duration.ofMillis(40), Map.of(), now, now.plus(Duration.ofHours(1)), 0));
            store.counters().increment(null, "claude-code", Map.of(Counter.HITS, 3L, Counter.MISSES, 4L,
                    Counter.FAILED, 1L, Counter.UNCACHEABLE_NONDETERMINISTIC, 2L, Counter.BYPASSED, 5L, Counter.SHARED, 6L,
                    Counter.STORE_ERRORS, 7L, Counter.SAVED_NANOS, 1_500_000_000L, Counter.KEPT_OUT_BYTES, 4000L,
                    Counter.TOOL_ANSWER_BYTES, 4100L));
            store.counters().increment("fs__read \"quoted\\\"", "ci-bot", Map.of(Counter.HITS, 2L, Counter.MISSES, 1L,
                    Counter.UNCACHEABLE_MUTATING_TOOL, 1L, Counter.TOOL_ANSWER_BYTES, 2048L));
        }
    }

    private int run(String... args) {
        out.reset();
        err.reset();
        List<String> all = new ArrayList<>(List.of(args));
        all.add("--db");
        all.add(db.toString());
        return Main.run(all.toArray(String[]::new), Map.of("XDG_CACHE_HOME", dir.resolve("cache").toString(),
                        "EXECACHE_NO_DAEMON", "1"), dir, new ByteArrayInputStream(new byte[0]),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private String output() {
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void theTableShowsTheStoreItsLimitsSinceWhenAndEveryCounter() {
        assertThat(run("stats")).isEqualTo(ExitCode.OK);

        assertThat(output())
                .contains("store            sqlite " + db)
                .contains("limits           at most 100 entries, no byte bound, kept 5m")
                .containsPattern("counting since   \\d{4}-\\d\\d-\\d\\dT")
                .contains("hits             5")
                .contains("misses           5 (ran; not stored: 1 failed, 3 uncacheable)")
                .contains("shared           6")
                .contains("failed           1")
                .contains("uncacheable      3 (mutating_tool 1, nondeterministic 2)")
                .contains("bypassed         5")
                .contains("store errors     7")
                .contains("entries          1");
    }

    @Test
    void jsonHasTheSameFiguresAndTheStore() throws Exception {
        assertThat(run("stats", "--format", "json")).isEqualTo(ExitCode.OK);

        JsonNode figures = Json.MAPPER.readTree(output());
        assertThat(figures.get("store").asText()).isEqualTo("sqlite");
        assertThat(figures.get("location").asText()).isEqualTo(db.toString());
        assertThat(figures.get("limits").get("maxEntries").asInt()).isEqualTo(100);
        assertThat(figures.get("limits").get("maxBytes").isNull()).isTrue();
        assertThat(figures.get("limits").get("ttlSeconds").asLong()).isEqualTo(300);
        assertThat(figures.get("failed").asLong()).isEqualTo(1);
        assertThat(figures.get("bypassed").asLong()).isEqualTo(5);
        assertThat(figures.get("uncacheable").get("nondeterministic").asLong()).isEqualTo(2);
        assertThat(figures.get("uncacheable").get("reads_unwatchable").asLong()).isZero();
        assertThat(Instant.parse(figures.get("countingSince").asText())).isBefore(Instant.now().plusSeconds(1));
        assertThat(figures.get("tools").get("fs__read \"quoted\\\"").get("uncacheable").asLong()).isEqualTo(1);

        assertThat(run("stats", "--json")).isEqualTo(ExitCode.OK);
        JsonNode again = Json.MAPPER.readTree(output());
        assertThat(again.get("hits").asLong()).isEqualTo(5);
        assertThat(again.get("entriesEstimatedBecause").isNull()).as("a SQLite file counts its entries exactly").isTrue();
    }

    @Test
    void zeroSetsTheCountersToZeroKeepsTheEntriesAndCountsFromNow() throws Exception {
        run("stats", "--json");
        Instant before = Instant.parse(Json.MAPPER.readTree(output()).get("countingSince").asText());

        assertThat(run("stats", "--zero")).isEqualTo(ExitCode.OK);
        assertThat(output()).contains("counters set to zero; entries kept");

        run("stats", "--json");
        JsonNode figures = Json.MAPPER.readTree(output());
        for (String counter : List.of("hits", "misses", "shared", "failed", "bypassed", "storeErrors", "evictions")) {
            assertThat(figures.get(counter).asLong()).as(counter).isZero();
        }
        assertThat(figures.get("uncacheable").get("nondeterministic").asLong()).isZero();
        assertThat(figures.get("tools").size()).isZero();
        assertThat(figures.get("entries").asLong()).isEqualTo(1);
        assertThat(Instant.parse(figures.get("countingSince").asText())).isAfterOrEqualTo(before);
    }

    @Test
    void anUnknownFormatIsAUsageErrorOnOneLine() {
        assertThat(run("stats", "--format", "yaml")).isEqualTo(ExitCode.USAGE);

        String errors = err.toString(StandardCharsets.UTF_8).strip();
        assertThat(errors).startsWith("execache: --format: unknown format 'yaml' (choose one of human, json, openmetrics)")
                .doesNotContain("\n").doesNotContain("Exception");
        assertThat(output()).isEmpty();
    }

    @Test
    void byAgentShowsOneRowPerAgentTheBusiestFirstWithTheContextKeptOut() {
        assertThat(run("stats", "--by", "agent")).isEqualTo(ExitCode.OK);

        List<String> lines = output().lines().toList();
        assertThat(lines.get(0)).startsWith("AGENT").contains("HITS", "MISSES", "HIT RATE", "SAVED", "KEPT OUT", "~TOKENS");
        assertThat(lines.get(1)).startsWith("claude-code").contains(" 3 ", " 4 ", "42.9%", "3.9 KiB", " 1000");
        assertThat(lines.get(2)).startsWith("ci-bot").contains(" 2 ", " 1 ", "66.7%");
    }

    @Test
    void byAgentAsJsonHasEachAgentsFigures() throws Exception {
        assertThat(run("stats", "--by", "agent", "--format", "json")).isEqualTo(ExitCode.OK);

        JsonNode agents = Json.MAPPER.readTree(output()).get("agents");
        assertThat(agents.fieldNames()).toIterable().containsExactly("ci-bot", "claude-code");
        assertThat(agents.at("/claude-code/hits").asLong()).isEqualTo(3);
        assertThat(agents.at("/claude-code/keptOutBytes").asLong()).isEqualTo(4000);
        assertThat(agents.at("/claude-code/keptOutTokens").asLong()).isEqualTo(1000);
        assertThat(agents.at("/ci-bot/uncacheable").asLong()).isEqualTo(1);
    }

    @Test
    void theTotalsShowTheContextKeptOutBesideTheTimeSaved() throws Exception {
        assertThat(run("stats")).isEqualTo(ExitCode.OK);
        assertThat(output()).contains("kept out         3.9 KiB (about 1000 tokens, at 4 bytes a token) of agents' contexts;"
                + " code consumed 6.0 KiB of tool answers");
        assertThat(output()).containsPattern("fs__read .*, 2.0 KiB of answers to code\n");

        assertThat(run("stats", "--json")).isEqualTo(ExitCode.OK);
        JsonNode figures = Json.MAPPER.readTree(output());
        assertThat(figures.get("keptOutBytes").asLong()).isEqualTo(4000);
        assertThat(figures.get("keptOutTokens").asLong()).isEqualTo(1000);
        assertThat(figures.get("toolAnswerBytes").asLong()).isEqualTo(4100 + 2048);
        assertThat(figures.at("/agents/claude-code/misses").asLong()).isEqualTo(4);
    }

    @Test
    void anUnknownBreakdownIsAUsageErrorOnOneLine() {
        assertThat(run("stats", "--by", "team")).isEqualTo(ExitCode.USAGE);

        assertThat(err.toString(StandardCharsets.UTF_8).strip())
                .startsWith("execache: --by: unknown breakdown 'team' (choose agent or tool)").doesNotContain("\n");
    }

    @Test
    void openMetricsHasEachAgentsSeriesAndTheContextKeptOut() {
        assertThat(run("stats", "--format", "openmetrics")).isEqualTo(ExitCode.OK);
        String text = output();

        assertFollowsOpenMetricsRules(text);
        assertThat(text)
                .contains("\nexecache_agent_hits_total{agent=\"claude-code\"} 3\n")
                .contains("\nexecache_agent_hits_total{agent=\"ci-bot\"} 2\n")
                .contains("\nexecache_agent_kept_out_bytes_total{agent=\"claude-code\"} 4000\n")
                .contains("# UNIT execache_kept_out_bytes bytes\n")
                .contains("\nexecache_kept_out_bytes_total 4000\n")
                .contains("\nexecache_kept_out_tokens_total 1000\n")
                .contains("\nexecache_answer_bytes_total 6148\n");
    }

    @Test
    void openMetricsFollowsTheFormatsRules() {
        assertThat(run("stats", "--format", "openmetrics")).isEqualTo(ExitCode.OK);
        String text = output();

        assertFollowsOpenMetricsRules(text);
        assertThat(text)
                .contains("# TYPE execache_hits counter\n")
                .contains("\nexecache_hits_total 5\n")
                .contains("\nexecache_misses_total 5\n")
                .contains("\nexecache_uncacheable_total{reason=\"nondeterministic\"} 2\n")
                .contains("\nexecache_saved_seconds_total 1.500000000\n")
                .contains("\nexecache_store_info{store=\"sqlite\",location=\"" + db + "\"} 1\n")
                .contains("\nexecache_tool_hits_total{tool=\"fs__read \\\"quoted\\\\\\\"\"} 2\n")
                .containsPattern("\nexecache_hits_created \\d+\\.\\d{3}\n")
                .endsWith("# EOF\n");
    }

    @Test
    void watchShowsTheFiguresAgainWithWhatChangedPerSecondAndEndsWithZero() {
        ByteArrayOutputStream seen = new ByteArrayOutputStream();
        AtomicBoolean counted = new AtomicBoolean();
        // once the first block is out, the fleet counts 10 more hits, before the watch reads again
        OutputStream hooked = new OutputStream() {
            @Override
            public void write(int b) {
                seen.write(b);
            }

            @Override
            public void write(byte[] bytes, int offset, int length) {
                seen.write(bytes, offset, length);
            }

            @Override
            public void flush() {
                if (seen.toString(StandardCharsets.UTF_8).contains("per second") && counted.compareAndSet(false, true)) {
                    try (SqliteCacheStore store = new SqliteCacheStore(db, 100, Clock.systemUTC())) {
                        store.counters().increment(null, Map.of(Counter.HITS, 10L));
                    }
                }
            }
        };

        int exit = Main.run(new String[] {"stats", "--watch", "--interval", "0.1", "--count", "2", "--db", db.toString()},
                Map.of("XDG_CACHE_HOME", dir.resolve("cache").toString(), "EXECACHE_NO_DAEMON", "1"), dir,
                new ByteArrayInputStream(new byte[0]), new PrintStream(hooked, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));

        String text = seen.toString(StandardCharsets.UTF_8);
        String[] blocks = text.split("execache stats at ");
        assertThat(exit).as(err.toString(StandardCharsets.UTF_8)).isEqualTo(ExitCode.OK);
        assertThat(blocks).as(text).hasSize(3);
        assertThat(blocks[1]).contains("every 0.1 s; Ctrl-C to stop").contains("hits             5\n")
                .contains("per second       from the next refresh on");
        assertThat(blocks[2]).contains("hits             15\n").containsPattern("per second       [1-9][0-9.]* hits, 0.0 misses");
        assertThat(text).as("no terminal: no redrawing").doesNotContain("\033[");
    }

    @Test
    void watchRefusesOpenMetricsAndAnIntervalBelowATenthOfASecond() {
        assertThat(run("stats", "--watch", "--format", "openmetrics")).isEqualTo(ExitCode.USAGE);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--watch shows the human or json format");
        assertThat(run("stats", "--watch", "--interval", "0.01")).isEqualTo(ExitCode.USAGE);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--interval: give seconds from 0.1 to 86400");
    }

    private static final Pattern NAME = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
    private static final Pattern LABEL_VALUE = Pattern.compile("\"(?:[^\"\\\\\\n]|\\\\[\\\\n\"])*\"");
    private static final Pattern LABELS = Pattern.compile(
            "\\{(?:[a-zA-Z_][a-zA-Z0-9_]*=" + LABEL_VALUE + "(?:,[a-zA-Z_][a-zA-Z0-9_]*=" + LABEL_VALUE + ")*)?}");
    private static final Pattern SAMPLE = Pattern.compile(
            "(" + NAME + ")(" + LABELS + ")? (-?[0-9]+(?:\\.[0-9]+)?(?:e[+-]?[0-9]+)?|NaN|[+-]Inf)");
    private static final Pattern TYPE = Pattern.compile("# TYPE (" + NAME + ") (counter|gauge|info|stateset|"
            + "histogram|gaugehistogram|summary|unknown)");
    private static final Pattern META = Pattern.compile("# (HELP|UNIT) (" + NAME + ") .*");

    /**
     * The rules of the OpenMetrics text format (OpenMetrics 1.0, "Text format" ABNF) that a
     * writer can break: every line a TYPE/HELP/UNIT line or a sample; a family's metadata before
     * its samples and each family in one block, never again later; a counter's samples named
     * {@code _total} or {@code _created}, an info's {@code _info}, a gauge's its own name; a UNIT
     * that the family name ends with; no labelset twice in a family; {@code # EOF} last, once.
     */
    static void assertFollowsOpenMetricsRules(String text) {
        assertThat(text).endsWith("# EOF\n");
        String[] lines = text.substring(0, text.length() - "# EOF\n".length()).split("\n", -1);
        assertThat(lines[lines.length - 1]).as("nothing after the last line before # EOF").isEmpty();
        Set<String> finished = new HashSet<>();
        Set<String> seenSamples = new HashSet<>();
        String family = null;
        String type = null;
        for (int i = 0; i < lines.length - 1; i++) {
            String line = lines[i];
            Matcher typeLine = TYPE.matcher(line);
            Matcher meta = META.matcher(line);
            Matcher sample = SAMPLE.matcher(line);
            if (typeLine.matches()) {
                if (family != null) {
                    finished.add(family);
                }
                family = typeLine.group(1);
                type = typeLine.group(2);
                assertThat(finished).as("family %s appears twice", family).doesNotContain(family);
                assertThat(family).as("a family's name has no sample suffix").doesNotEndWith("_total");
            } else if (meta.matches()) {
                assertThat(meta.group(2)).as("metadata of the current family: " + line).isEqualTo(family);
                if (meta.group(1).equals("UNIT")) {
                    assertThat(family).endsWith("_" + line.substring(line.lastIndexOf(' ') + 1));
                }
            } else if (sample.matches()) {
                assertThat(family).as("a sample after its TYPE: " + line).isNotNull();
                String name = sample.group(1);
                List<String> allowed = switch (type) {
                    case "counter" -> List.of(family + "_total", family + "_created");
                    case "info" -> List.of(family + "_info");
                    default -> List.of(family);
                };
                assertThat(name).as(line).isIn(allowed);
                assertThat(seenSamples.add(name + (sample.group(2) == null ? "" : sample.group(2))))
                        .as("labelset twice: " + line).isTrue();
            } else {
                throw new AssertionError("line " + (i + 1) + " is neither metadata nor a sample: " + line);
            }
        }
    }
}
