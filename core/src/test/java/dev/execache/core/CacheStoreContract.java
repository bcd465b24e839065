package dev.execache.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.CacheStore;
import dev.execache.core.spi.Counter;
import dev.execache.core.spi.StoreCounters;
import dev.execache.core.spi.GroupBound;
import dev.execache.core.spi.WriteGenerations;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Every rule a {@link CacheStore} must keep, written once. Each store module extends this
 * and runs it against its real backend.
 */
public abstract class CacheStoreContract {
    protected static final Duration TTL = Duration.ofMinutes(5);
    protected static final int BOUND = 5;

    protected MutableClock clock;
    protected CacheStore store;
    private final List<CacheStore> opened = new ArrayList<>();

    /**
     * A new, empty store holding at most {@code maxEntries}, reading time from {@code clock}.
     * Counters and last-seen versions start empty too.
     */
    protected abstract CacheStore createStore(int maxEntries, MutableClock clock) throws Exception;

    /**
     * Changes the bytes of the value stored under {@code key} in {@link #store}'s backend, the
     * way a disk or a stray writer would, leaving everything else (the checksum too) as it was.
     */
    protected abstract void damageValue(String key, String newValue) throws Exception;

    /**
     * Whether the store itself refuses an entry whose value was changed in storage (a store that
     * signs its entries does), rather than returning it for the caller's checksum to catch.
     */
    protected boolean refusesDamagedEntries() {
        return false;
    }

    /**
     * Makes {@link #store}'s backend refuse every write from now on while it still reads (as a
     * full disk, or Redis out of memory under {@code noeviction}, would) and returns true; false
     * where the backend cannot be made to here, and the rule is then not checked. A subclass
     * that did undoes it after the test.
     */
    protected boolean refuseWrites() throws Exception {
        return false;
    }

    @BeforeEach
    void openStore() throws Exception {
        clock = new MutableClock(Instant.now());
        store = open(BOUND);
    }

    @AfterEach
    void closeStores() {
        opened.forEach(CacheStore::close);
    }

    protected CacheStore open(int maxEntries) throws Exception {
        CacheStore created = createStore(maxEntries, clock);
        opened.add(created);
        return created;
    }

    protected CacheEntry entry(String key, String value, Map<String, String> tools) {
        Instant now = clock.instant();
        return new CacheEntry(key, value, "log of " + key, Duration.ofMillis(120), tools, now, now.plus(TTL), 0);
    }

    protected CacheEntry entry(String key) {
        return entry(key, "\"value of " + key + "\"", Map.of());
    }

    @Test
    void getReturnsWhatPutStored() {
        CacheEntry stored = entry("v1:a", "{\"n\":1}", Map.of("github", "v1"));
        store.put(stored);

        Optional<CacheEntry> found = store.get("v1:a");

        assertThat(found).isPresent();
        CacheEntry got = found.get();
        assertThat(got.key()).isEqualTo("v1:a");
        assertThat(got.value()).isEqualTo("{\"n\":1}");
        assertThat(got.console()).isEqualTo("log of v1:a");
        assertThat(got.executionTime()).isEqualTo(Duration.ofMillis(120));
        assertThat(got.toolVersions()).isEqualTo(Map.of("github", "v1"));
        assertThat(got.createdAt().toEpochMilli()).isEqualTo(stored.createdAt().toEpochMilli());
        assertThat(got.expiresAt().toEpochMilli()).isEqualTo(stored.expiresAt().toEpochMilli());
    }

    @Test
    void aRunsTraceIsKeptWithItsEntryAsWrittenAndNamesNoTool() {
        String trace = "0 fs read_text_file 3f2a9c01 9b1c44e0a2f3 {\"path\":\"/tmp/n\u00f6te \\\"x\\\".txt\"}\n"
                + "0 gh get_issue 51d0e2aa 0c9d {\"n\":1,\"q\":\"a b\\nc\"}\n" + "1 gh list x".repeat(500) + "\n";
        CacheEntry run = entry("v1:traced", "7", Map.of("fs__read_text_file", "3f2a9c01", CacheEntry.TRACE, trace));
        store.put(run);
        CacheEntry kept = entry("v1:kept:traced", "7", Map.of(CacheEntry.TRACE, trace));
        store.put(kept, new GroupBound("execache:revalidation", 5));

        assertThat(store.get("v1:traced").orElseThrow().toolVersions()).isEqualTo(run.toolVersions());
        assertThat(store.peek("v1:kept:traced").orElseThrow().toolVersions().get(CacheEntry.TRACE)).isEqualTo(trace);
        assertThat(store.removeByTool("gh__get_issue")).isZero();
        assertThat(store.removeByTool("fs__read_text_file")).isEqualTo(1);
        assertThat(store.peek("v1:kept:traced")).isPresent();
        assertThat(store.peek("v1:traced")).isEmpty();
    }

    @Test
    void labelAndCreationTimeAreKeptAsStored() {
        Instant made = clock.instant();
        store.put(entry("v1:labelled").withLabel("report.ts"));
        clock.advance(Duration.ofSeconds(7));

        CacheEntry read = store.peek("v1:labelled").orElseThrow();

        assertThat(read.label()).isEqualTo("report.ts");
        assertThat(read.createdAt().toEpochMilli()).isEqualTo(made.toEpochMilli());
        assertThat(store.get("v1:labelled").orElseThrow().label()).isEqualTo("report.ts");
    }

    @Test
    void anEntryWithoutALabelReadsBackWithAnEmptyOne() {
        store.put(entry("v1:plain"));

        assertThat(store.peek("v1:plain").orElseThrow().label()).isEmpty();
    }

    @Test
    void entriesListsEveryLiveEntryWithoutCountingHitsOrRefreshingRecency() {
        store.put(entry("v1:a").withLabel("first"));
        store.put(entry("v1:b").withLabel("second"));
        store.get("v1:b");
        clock.advance(Duration.ofMinutes(1));
        store.put(entry("v1:c").withLabel("third"));

        List<CacheEntry> listed = store.entries();

        assertThat(listed).extracting(CacheEntry::key).containsExactlyInAnyOrder("v1:a", "v1:b", "v1:c");
        assertThat(listed).filteredOn(e -> e.key().equals("v1:b")).singleElement()
                .satisfies(e -> assertThat(e.hits()).isEqualTo(1)).satisfies(e -> assertThat(e.label()).isEqualTo("second"));
        assertThat(store.peek("v1:a").orElseThrow().hits()).isZero();
        // listing is not a use: "v1:a" is still the least recently used and goes first
        for (int i = 0; i < BOUND - 2; i++) {
            store.put(entry("v1:more" + i));
        }
        assertThat(store.peek("v1:a")).isEmpty();
        assertThat(store.peek("v1:b")).isPresent();
    }

    @Test
    void entriesLeavesOutExpiredOnes() {
        store.put(entry("v1:old"));
        clock.advance(TTL.minusSeconds(1));
        store.put(entry("v1:new"));
        clock.advance(Duration.ofSeconds(2));

        assertThat(store.entries()).extracting(CacheEntry::key).containsExactly("v1:new");
    }

    @Test
    void anEntryKeepsTheChecksumOfItsValue() {
        CacheEntry stored = entry("v1:a", "{\"text\":\"é ✓\"}", Map.of());
        store.put(stored);

        assertThat(store.get("v1:a")).hasValueSatisfying(got -> {
            assertThat(got.checksum()).isEqualTo(stored.checksum());
            assertThat(got.isIntact()).isTrue();
        });
    }

    @Test
    void aValueDamagedInStorageFailsItsCheck() throws Exception {
        store.put(entry("v1:a", "{\"n\":1}", Map.of()));

        damageValue("v1:a", "{\"n\":2}");

        if (refusesDamagedEntries()) {
            assertThat(store.get("v1:a")).isEmpty();
            assertThat(store.counters().totals()).containsEntry(Counter.DAMAGED, 1L);
        } else {
            assertThat(store.get("v1:a")).hasValueSatisfying(got -> assertThat(got.isIntact()).isFalse());
        }
    }

    @Test
    void aDamagedValueIsNeverServedItIsRemovedCountedAndRunAgain() throws Exception {
        ScriptedSandbox sandbox = ScriptedSandbox.echo();
        CachedExecutor executor = CachedExecutor.builder(sandbox, store).clock(clock).build();
        ExecutionRequest request = ExecutionRequest.of("return 1", Map.of());
        String key = executor.execute(request).key();

        damageValue(key, "\"forged\"");
        ExecutionOutcome afterDamage = executor.execute(request);

        assertThat(afterDamage.status()).isEqualTo(CacheStatus.MISS);
        assertThat(afterDamage.result().value()).isEqualTo("\"return 1\"");
        assertThat(sandbox.executions()).isEqualTo(2);
        assertThat(store.counters().totals()).containsEntry(Counter.DAMAGED, 1L);
        ExecutionOutcome next = executor.execute(request);
        assertThat(next.status()).isEqualTo(CacheStatus.HIT);
        assertThat(next.result().value()).isEqualTo("\"return 1\"");
    }

    /**
     * A store that refuses writes still serves what it holds and its figures: a hit it cannot
     * count is a hit all the same, and a refused write (an entry, a count, a flight) turns no
     * read off.
     */
    @Test
    void aStoreThatRefusesWritesStillServesWhatItHoldsAndItsFigures() throws Exception {
        store.put(entry("v1:a"));
        store.counters().increment(Counter.MISSES, 3);
        org.junit.jupiter.api.Assumptions.assumeTrue(refuseWrites(), "this store cannot be made to refuse writes here");

        assertThat(store.get("v1:a")).as("a hit it cannot count").isPresent();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> store.put(entry("v1:b")))
                .isInstanceOf(RuntimeException.class);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> store.counters().increment(Counter.HITS, 1))
                .isInstanceOf(RuntimeException.class);
        try {
            store.acquireFlight("v1:c", Duration.ofSeconds(30)).close();
        } catch (RuntimeException refused) {
            // a flight is a write too: refused, or given locally
        }

        assertThat(store.get("v1:a")).as("no refused write turns reads off").isPresent();
        assertThat(store.peek("v1:b")).isEmpty();
        assertThat(store.size()).isEqualTo(1);
        assertThat(store.entries()).extracting(CacheEntry::key).containsExactly("v1:a");
        assertThat(store.counters().totals().get(Counter.MISSES)).isEqualTo(3L);
    }

    @Test
    void missingKeyIsEmpty() {
        assertThat(store.get("v1:absent")).isEmpty();
        assertThat(store.peek("v1:absent")).isEmpty();
    }

    @Test
    void putReplacesTheEntryUnderTheSameKey() {
        store.put(entry("v1:a", "1", Map.of()));
        store.put(entry("v1:a", "2", Map.of()));

        assertThat(store.get("v1:a")).map(CacheEntry::value).contains("2");
        assertThat(store.size()).isEqualTo(1);
    }

    @Test
    void everyGetCountsAHitButPeekDoesNot() {
        store.put(entry("v1:a"));

        store.get("v1:a");
        store.get("v1:a");
        Optional<CacheEntry> third = store.get("v1:a");

        assertThat(third).map(CacheEntry::hits).contains(3L);
        assertThat(store.peek("v1:a")).map(CacheEntry::hits).contains(3L);
        assertThat(store.peek("v1:a")).map(CacheEntry::hits).contains(3L);
    }

    @Test
    void oneMoreThanTheBoundEvictsTheLeastRecentlyUsed() {
        for (int i = 0; i < BOUND; i++) {
            store.put(entry("v1:" + i));
            clock.advance(Duration.ofMillis(10));
        }
        store.get("v1:0");
        clock.advance(Duration.ofMillis(10));

        store.put(entry("v1:new"));

        assertThat(store.size()).isEqualTo(BOUND);
        assertThat(store.peek("v1:0")).as("refreshed by get").isPresent();
        assertThat(store.peek("v1:1")).as("least recently used").isEmpty();
        assertThat(store.peek("v1:new")).isPresent();
        assertThat(store.counters().totals().get(Counter.EVICTIONS)).isEqualTo(1L);
    }

    @Test
    void peekDoesNotRefreshRecency() {
        for (int i = 0; i < BOUND; i++) {
            store.put(entry("v1:" + i));
            clock.advance(Duration.ofMillis(10));
        }
        store.peek("v1:0");

        store.put(entry("v1:new"));

        assertThat(store.peek("v1:0")).isEmpty();
        assertThat(store.peek("v1:1")).isPresent();
    }

    @Test
    void theBoundHoldsUnderManyPuts() {
        for (int i = 0; i < BOUND * 20; i++) {
            store.put(entry("v1:" + i));
            clock.advance(Duration.ofMillis(1));
        }

        assertThat(store.size()).isEqualTo(BOUND);
        for (int i = BOUND * 20 - BOUND; i < BOUND * 20; i++) {
            assertThat(store.peek("v1:" + i)).as("recent entry v1:" + i).isPresent();
        }
        assertThat(store.counters().totals().get(Counter.EVICTIONS)).isEqualTo(BOUND * 19L);
    }

    @Test
    void expiredEntryIsNeverReturned() {
        store.put(entry("v1:a"));
        clock.advance(TTL.minusMillis(1));
        assertThat(store.get("v1:a")).isPresent();

        clock.advance(Duration.ofMillis(1));

        assertThat(store.get("v1:a")).isEmpty();
        assertThat(store.peek("v1:a")).isEmpty();
        assertThat(store.counters().totals().get(Counter.EXPIRATIONS)).isEqualTo(1L);
    }

    @Test
    void expiredEntriesArePurgedAndNotCounted() {
        store.put(entry("v1:a"));
        store.put(entry("v1:b"));
        clock.advance(Duration.ofMinutes(1));
        store.put(entry("v1:c"));
        clock.advance(TTL.minusMinutes(1));

        assertThat(store.purgeExpired()).isEqualTo(2);
        assertThat(store.size()).isEqualTo(1);
        assertThat(store.peek("v1:c")).isPresent();
        assertThat(store.counters().totals().get(Counter.EXPIRATIONS)).isEqualTo(2L);
    }

    @Test
    void sizeDoesNotCountExpiredEntries() {
        store.put(entry("v1:a"));
        clock.advance(TTL);
        store.put(entry("v1:b"));

        assertThat(store.size()).isEqualTo(1);
    }

    @Test
    void removeRemovesOneEntry() {
        store.put(entry("v1:a"));
        store.put(entry("v1:b"));

        assertThat(store.remove("v1:a")).isTrue();
        assertThat(store.remove("v1:a")).isFalse();
        assertThat(store.peek("v1:a")).isEmpty();
        assertThat(store.peek("v1:b")).isPresent();
    }

    @Test
    void toolVersionChangeRemovesOnlyEntriesOfThatTool() {
        store.put(entry("v1:gh1", "1", Map.of("github", "v1")));
        store.put(entry("v1:gh2", "2", Map.of("github", "v1", "sql", "3")));
        store.put(entry("v1:sql", "3", Map.of("sql", "3")));
        store.put(entry("v1:none", "4", Map.of()));
        store.put(entry("v1:githubby", "5", Map.of("githubby", "1")));

        assertThat(store.removeByTool("github")).isEqualTo(2);

        assertThat(store.peek("v1:gh1")).isEmpty();
        assertThat(store.peek("v1:gh2")).isEmpty();
        assertThat(store.peek("v1:sql")).isPresent();
        assertThat(store.peek("v1:none")).isPresent();
        assertThat(store.peek("v1:githubby")).isPresent();
        assertThat(store.removeByTool("github")).isZero();
    }

    @Test
    void removingByToolVersionRemovesOnlyEntriesMadeWithThatVersion() {
        store.put(entry("v1:old", "1", Map.of("github", "v1")));
        store.put(entry("v1:oldWithSql", "2", Map.of("github", "v1", "sql", "3")));
        store.put(entry("v1:new", "3", Map.of("github", "v2")));
        store.put(entry("v1:sql", "4", Map.of("sql", "v1")));
        store.put(entry("v1:odd", "5", Map.of("github", "v1\u00e9 \"x\":1")));

        assertThat(store.removeByTool("github", "v1")).isEqualTo(2);

        assertThat(store.peek("v1:old")).isEmpty();
        assertThat(store.peek("v1:oldWithSql")).isEmpty();
        assertThat(store.peek("v1:new")).as("made with the version another project uses").isPresent();
        assertThat(store.peek("v1:sql")).as("another tool with the same version string").isPresent();
        assertThat(store.peek("v1:odd")).isPresent();
        assertThat(store.removeByTool("github", "v1")).isZero();
        assertThat(store.removeByTool("github", "v1\u00e9 \"x\":1")).isEqualTo(1);
        assertThat(store.removeByTool("github")).isEqualTo(1);
        assertThat(store.size()).isEqualTo(1);
    }

    @Test
    void replacingAnEntryForgetsItsOldToolVersions() {
        store.put(entry("v1:a", "1", Map.of("github", "v1")));
        store.put(entry("v1:a", "2", Map.of("github", "v2")));

        assertThat(store.removeByTool("github", "v1")).isZero();
        assertThat(store.removeByTool("github", "v2")).isEqualTo(1);
    }

    @Test
    void replacingAnEntryForgetsItsOldTools() {
        store.put(entry("v1:a", "1", Map.of("github", "v1")));
        store.put(entry("v1:a", "2", Map.of("sql", "3")));

        assertThat(store.removeByTool("github")).isZero();
        assertThat(store.removeByTool("sql")).isEqualTo(1);
    }

    @Test
    void removeByPatternRemovesMatchingKeysOnly() {
        store.put(entry("v1:read:1"));
        store.put(entry("v1:read:2"));
        store.put(entry("v1:read_file:1"));
        store.put(entry("v1:query:1"));

        assertThat(store.removeByPattern(Glob.of("v1:read:*"))).isEqualTo(2);

        assertThat(store.peek("v1:read_file:1")).isPresent();
        assertThat(store.peek("v1:query:1")).isPresent();
        assertThat(store.removeByPattern(Glob.of("v1:?uery:*"))).isEqualTo(1);
        assertThat(store.size()).isEqualTo(1);
    }

    @Test
    void removeByPatternTreatsRegexCharactersLiterally() {
        store.put(entry("v1:a.b"));
        store.put(entry("v1:axb"));

        assertThat(store.removeByPattern(Glob.of("v1:a.b"))).isEqualTo(1);
        assertThat(store.peek("v1:axb")).isPresent();
    }

    @Test
    void clearRemovesEveryEntryButKeepsCountersAndVersions() {
        store.put(entry("v1:a", "1", Map.of("github", "v1")));
        store.put(entry("v1:b"));
        store.counters().increment(Counter.HITS, 2);
        store.recordVersions(CacheStore.DEFAULT_SCOPE, Map.of("github", "v1"));

        store.clear();

        assertThat(store.size()).isZero();
        assertThat(store.get("v1:a")).isEmpty();
        assertThat(store.removeByTool("github")).isZero();
        assertThat(store.counters().totals().get(Counter.HITS)).isEqualTo(2L);
        assertThat(store.lastSeenVersions(CacheStore.DEFAULT_SCOPE)).isEqualTo(Map.of("github", "v1"));
    }

    @Test
    void countersStartAtZeroAndAddUp() {
        Map<Counter, Long> fresh = store.counters().totals();
        for (Counter counter : Counter.values()) {
            assertThat(fresh.get(counter)).as(counter.name()).isZero();
        }

        store.counters().increment(Counter.HITS, 1);
        store.counters().increment(Counter.HITS, 2);
        store.counters().increment(Counter.SAVED_NANOS, 5_000_000_000L);

        assertThat(store.counters().totals().get(Counter.HITS)).isEqualTo(3L);
        assertThat(store.counters().totals().get(Counter.SAVED_NANOS)).isEqualTo(5_000_000_000L);
        assertThat(store.counters().totals().get(Counter.MISSES)).isZero();
    }

    @Test
    void severalCountersAddUpInOneCall() {
        store.counters().increment(Counter.HITS, 1);

        store.counters().increment(Map.of(Counter.HITS, 2L, Counter.SAVED_NANOS, 7L));

        assertThat(store.counters().totals().get(Counter.HITS)).isEqualTo(3L);
        assertThat(store.counters().totals().get(Counter.SAVED_NANOS)).isEqualTo(7L);
    }

    @Test
    void aToolsCountersAddToItsOwnAndToTheTotals() {
        assertThat(store.counters().perTool()).isEmpty();

        store.counters().increment("read", Map.of(Counter.HITS, 1L, Counter.SAVED_NANOS, 30L));
        store.counters().increment("read", Map.of(Counter.MISSES, 1L));
        store.counters().increment("mcp__db__query:users", Map.of(Counter.MISSES, 2L));
        store.counters().increment(null, Map.of(Counter.HITS, 4L));

        assertThat(store.counters().totals()).containsEntry(Counter.HITS, 5L).containsEntry(Counter.MISSES, 3L)
                .containsEntry(Counter.SAVED_NANOS, 30L);
        assertThat(store.counters().perTool()).containsOnlyKeys("read", "mcp__db__query:users");
        assertThat(store.counters().perTool().get("read")).containsEntry(Counter.HITS, 1L).containsEntry(Counter.MISSES, 1L)
                .containsEntry(Counter.SAVED_NANOS, 30L).containsEntry(Counter.EVICTIONS, 0L);
        assertThat(store.counters().perTool().get("mcp__db__query:users")).containsEntry(Counter.MISSES, 2L);
    }

    @Test
    void callsAndRemovalsAfterWritesAreCountedByCauseInTheStore() {
        MutableToolVersions versions = new MutableToolVersions(Map.of("fs__read", "1"));
        CachedTool tools = CachedTool.builder((tool, args) -> ToolResult.ok("{\"read\":1}"), store).clock(clock)
                .toolVersions(versions).build();
        tools.call(ToolCallRequest.of("fs__read", Map.of("path", "a")));
        tools.call(ToolCallRequest.of("fs__read", Map.of("path", "a")));
        tools.call(ToolCallRequest.of("fs__read", Map.of("path", "b")));
        tools.call(ToolCallRequest.of("fs__write_file", Map.of("path", "a")).withAgent("claude-code").uncached(true));
        tools.policy().clear("fs__*", RemovalCause.WRITE);
        tools.call(ToolCallRequest.of("fs__read", Map.of("path", "a")));
        versions.set("fs__read", "2");
        tools.call(ToolCallRequest.of("fs__read", Map.of("path", "a")));
        tools.policy().clear("fs__read", RemovalCause.RESOURCE);
        tools.call(ToolCallRequest.of("fs__read", Map.of("path", "a")));
        tools.policy().invalidateTool("fs__read");

        CacheStats stats = CacheStats.of(store);

        assertThat(stats.calls()).isEqualTo(7);
        assertThat(stats.tools().get("fs__write_file").calls()).isEqualTo(1);
        assertThat(stats.tools().get("fs__read").calls()).isEqualTo(6);
        assertThat(stats.agents().get("claude-code").calls()).isEqualTo(1);
        assertThat(stats.removalsByCause()).containsExactly(Map.entry("write", 2L), Map.entry("version", 1L),
                Map.entry("resource", 1L), Map.entry("hand", 1L), Map.entry("expiry", 0L));
        assertThat(stats.invalidations()).isEqualTo(5);
        assertThat(stats.tools().get("fs__read").invalidations()).isEqualTo(2);
    }

    @Test
    void everyCounterIsKeptInTotalPerToolAndPerAgent() {
        long delta = 1;
        for (Counter counter : Counter.values()) {
            store.counters().increment("read", "claude-code", Map.of(counter, delta));
            store.counters().increment(null, Map.of(counter, 100L));
            delta++;
        }

        delta = 1;
        for (Counter counter : Counter.values()) {
            assertThat(store.counters().totals().get(counter)).as(counter.name()).isEqualTo(delta + 100);
            assertThat(store.counters().perTool().get("read").get(counter)).as("read " + counter.name()).isEqualTo(delta);
            assertThat(store.counters().perAgent().get("claude-code").get(counter)).as("claude-code " + counter.name())
                    .isEqualTo(delta);
            delta++;
        }
    }

    @Test
    void anAgentsCountersAddToItsOwnToItsToolsAndToTheTotals() {
        assertThat(store.counters().perAgent()).isEmpty();

        store.counters().increment("read", "claude-code", Map.of(Counter.HITS, 1L, Counter.KEPT_OUT_BYTES, 400L));
        store.counters().increment(null, "claude-code", Map.of(Counter.MISSES, 1L));
        store.counters().increment("read", "ci-bot", Map.of(Counter.MISSES, 2L));
        store.counters().increment("read", null, Map.of(Counter.HITS, 4L));

        assertThat(store.counters().totals()).containsEntry(Counter.HITS, 5L).containsEntry(Counter.MISSES, 3L)
                .containsEntry(Counter.KEPT_OUT_BYTES, 400L);
        assertThat(store.counters().perTool().get("read")).containsEntry(Counter.HITS, 5L).containsEntry(Counter.MISSES, 2L);
        assertThat(store.counters().perAgent()).containsOnlyKeys("ci-bot", "claude-code");
        assertThat(store.counters().perAgent().get("claude-code")).containsEntry(Counter.HITS, 1L)
                .containsEntry(Counter.MISSES, 1L).containsEntry(Counter.KEPT_OUT_BYTES, 400L);
        assertThat(store.counters().perAgent().get("ci-bot")).containsEntry(Counter.MISSES, 2L)
                .containsEntry(Counter.HITS, 0L);
    }

    @Test
    void agentsPastTheCapAreCountedAsOtherAndThoseCountedBeforeKeepTheirOwn() {
        for (int i = 0; i < StoreCounters.MAX_AGENTS; i++) {
            store.counters().increment(null, "agent-" + i, Map.of(Counter.HITS, 1L));
        }

        store.counters().increment(null, "latecomer", Map.of(Counter.HITS, 1L));
        store.counters().increment("read", "another-latecomer", Map.of(Counter.MISSES, 2L));
        store.counters().increment(null, "agent-7", Map.of(Counter.HITS, 1L));

        Map<String, Map<Counter, Long>> perAgent = store.counters().perAgent();
        assertThat(perAgent).hasSize(StoreCounters.MAX_AGENTS + 1).containsKey(StoreCounters.OTHER_AGENT)
                .doesNotContainKeys("latecomer", "another-latecomer");
        assertThat(perAgent.get(StoreCounters.OTHER_AGENT)).containsEntry(Counter.HITS, 1L).containsEntry(Counter.MISSES, 2L);
        assertThat(perAgent.get("agent-7")).containsEntry(Counter.HITS, 2L);
        assertThat(store.counters().totals()).containsEntry(Counter.HITS, StoreCounters.MAX_AGENTS + 2L);
    }

    @Test
    void zeroingForgetsTheAgentsSoNewOnesAreCountedByName() {
        for (int i = 0; i < StoreCounters.MAX_AGENTS; i++) {
            store.counters().increment(null, "agent-" + i, Map.of(Counter.HITS, 1L));
        }

        store.counters().zero();
        store.counters().increment(null, "newcomer", Map.of(Counter.HITS, 1L));

        assertThat(store.counters().perAgent()).containsOnlyKeys("newcomer");
    }

    @Test
    void zeroingSetsEveryCounterToZeroKeepsEntriesAndVersionsAndSaysSinceWhen() {
        store.put(entry("v1:a"));
        store.recordVersions(CacheStore.DEFAULT_SCOPE, Map.of("github", "v1"));
        store.counters().increment("read", "claude-code", Map.of(Counter.HITS, 3L, Counter.FAILED, 1L));
        store.counters().increment(null, Map.of(Counter.UNCACHEABLE_NONDETERMINISTIC, 2L));
        clock.advance(Duration.ofMinutes(3));
        Instant zeroedAt = clock.instant();

        store.counters().zero();

        for (Counter counter : Counter.values()) {
            assertThat(store.counters().totals().get(counter)).as(counter.name()).isZero();
        }
        assertThat(store.counters().perTool()).isEmpty();
        assertThat(store.counters().perAgent()).isEmpty();
        assertThat(store.counters().countingSince()).hasValueSatisfying(since ->
                assertThat(since.toEpochMilli()).isEqualTo(zeroedAt.toEpochMilli()));
        assertThat(store.peek("v1:a")).isPresent();
        assertThat(store.lastSeenVersions(CacheStore.DEFAULT_SCOPE)).isEqualTo(Map.of("github", "v1"));

        clock.advance(Duration.ofMinutes(1));
        store.counters().increment("read", Map.of(Counter.HITS, 1L));
        assertThat(store.counters().totals().get(Counter.HITS)).isEqualTo(1L);
        assertThat(store.counters().perTool().get("read").get(Counter.HITS)).isEqualTo(1L);
        assertThat(store.counters().countingSince().orElseThrow().toEpochMilli()).isEqualTo(zeroedAt.toEpochMilli());
    }

    @Test
    void countingStartsNoLaterThanTheFirstCount() {
        Instant created = clock.instant();
        clock.advance(Duration.ofMinutes(2));

        store.counters().increment(Counter.MISSES, 1);

        assertThat(store.counters().countingSince()).hasValueSatisfying(since -> assertThat(since.toEpochMilli())
                .isBetween(created.toEpochMilli(), clock.millis()));
    }

    @Test
    void aGroupHoldsAtMostItsBoundEvictingItsOwnLeastRecentlyUsed() {
        GroupBound reads = new GroupBound("tool:read", 2);
        store.put(entry("v1:other"));
        assertThat(store.put(entry("v1:a"), reads)).isEmpty();
        clock.advance(Duration.ofMillis(10));
        assertThat(store.put(entry("v1:b"), reads)).isEmpty();
        store.get("v1:a");

        List<String> evicted = store.put(entry("v1:c"), reads);

        assertThat(evicted).containsExactly("v1:b");
        assertThat(store.peek("v1:b")).isEmpty();
        assertThat(store.peek("v1:a")).isPresent();
        assertThat(store.peek("v1:c")).isPresent();
        assertThat(store.peek("v1:other")).as("entries outside the group are not the group's to evict").isPresent();
        assertThat(store.counters().totals().get(Counter.EVICTIONS)).isEqualTo(1L);
    }

    @Test
    void aGroupWhoseBoundShrankIsEvictedDownToItInOnePut() {
        GroupBound wide = new GroupBound("tool:read", 3);
        for (String key : List.of("v1:a", "v1:b", "v1:c")) {
            assertThat(store.put(entry(key), wide)).isEmpty();
            clock.advance(Duration.ofMillis(10));
        }

        List<String> evicted = store.put(entry("v1:d"), new GroupBound("tool:read", 1));

        assertThat(evicted).containsExactlyInAnyOrder("v1:a", "v1:b", "v1:c");
        assertThat(store.peek("v1:d")).isPresent();
        assertThat(store.counters().totals().get(Counter.EVICTIONS)).isEqualTo(3L);
    }

    @Test
    void aGroupsCountIsExactAfterRemoveInvalidationPatternAndClear() {
        GroupBound reads = new GroupBound("tool:read", 2);
        store.put(entry("v1:a", "1", Map.of("read", "1")), reads);
        store.put(entry("v1:b", "2", Map.of()), reads);
        store.removeByTool("read");
        store.remove("v1:b");
        assertThat(store.put(entry("v1:c"), reads)).isEmpty();
        assertThat(store.put(entry("v1:d"), reads)).isEmpty();

        store.removeByPattern(Glob.of("v1:?"));
        assertThat(store.put(entry("v1:e"), reads)).isEmpty();
        assertThat(store.put(entry("v1:f"), reads)).isEmpty();

        store.clear();
        assertThat(store.put(entry("v1:g"), reads)).isEmpty();
        assertThat(store.put(entry("v1:h"), reads)).isEmpty();
        assertThat(store.put(entry("v1:g"), reads)).as("replacing an entry does not count it twice").isEmpty();
        assertThat(store.put(entry("v1:i"), reads)).hasSize(1);
        assertThat(store.counters().totals().get(Counter.EVICTIONS)).isEqualTo(1L);
    }

    @Test
    void lastSeenVersionsAreMergedPerTool() {
        assertThat(store.lastSeenVersions(CacheStore.DEFAULT_SCOPE)).isEmpty();

        store.recordVersions(CacheStore.DEFAULT_SCOPE, Map.of("github", "v1", "sql", "3"));
        store.recordVersions(CacheStore.DEFAULT_SCOPE, Map.of("github", "v2"));

        assertThat(store.lastSeenVersions(CacheStore.DEFAULT_SCOPE)).isEqualTo(Map.of("github", "v2", "sql", "3"));
    }

    @Test
    void lastSeenVersionsAreKeptPerScope() {
        String here = "/home/ada/one/execache.yaml";
        String there = "/home/ada/two:\u00e9/execache.yaml";
        store.recordVersions(here, Map.of("github", "v1", "sql", "3"));
        store.recordVersions(there, Map.of("github", "v2"));
        store.recordVersions(CacheStore.DEFAULT_SCOPE, Map.of("github", "v0"));

        assertThat(store.lastSeenVersions(here)).isEqualTo(Map.of("github", "v1", "sql", "3"));
        assertThat(store.lastSeenVersions(there)).isEqualTo(Map.of("github", "v2"));
        assertThat(store.lastSeenVersions(CacheStore.DEFAULT_SCOPE)).isEqualTo(Map.of("github", "v0"));
        assertThat(store.lastSeenVersions("/nowhere")).isEmpty();
    }

    @Test
    void estimatedBytesGrowWithEntriesAndShrinkWhenRemoved() {
        long empty = store.estimatedBytes();
        store.put(entry("v1:a", "\"" + "x".repeat(10_000) + "\"", Map.of()));
        long withOne = store.estimatedBytes();

        assertThat(withOne).isGreaterThanOrEqualTo(empty + 10_000);

        store.remove("v1:a");
        assertThat(store.estimatedBytes()).isLessThan(withOne);
    }

    @Test
    void valuesSurviveUnicodeAndLargeText() {
        String value = "{\"text\":\"héllo \\u0000 ✓ 😀 " + "y".repeat(100_000) + "\"}";
        store.put(entry("v1:big", value, Map.of("tøøl", "v1 ✓")));

        CacheEntry got = store.get("v1:big").orElseThrow();

        assertThat(got.value()).isEqualTo(value);
        assertThat(got.toolVersions()).isEqualTo(Map.of("tøøl", "v1 ✓"));
    }

    @Test
    void manyThreadsNeverBreakTheBoundOrReadWhatNoPutWrote() throws Exception {
        int threads = 8;
        int operations = operationsPerThreadForConcurrencyTest();
        int bound = 50;
        CacheStore shared = open(bound);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                futures.add(pool.submit(() -> {
                    ThreadLocalRandom random = ThreadLocalRandom.current();
                    for (int i = 0; i < operations; i++) {
                        String key = "v1:k" + random.nextInt(200);
                        switch (random.nextInt(10)) {
                            case 0 -> shared.remove(key);
                            case 1, 2, 3, 4 -> shared.put(entry(key, "\"" + key + "\"", Map.of("t" + random.nextInt(3), "1")));
                            default -> shared.get(key).ifPresent(found ->
                                    assertThat(found.value()).isEqualTo("\"" + key + "\""));
                        }
                        if (i % 500 == 0) {
                            assertThat(shared.size()).isLessThanOrEqualTo(bound);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> future : futures) {
                future.get(5, TimeUnit.MINUTES);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(shared.size()).isLessThanOrEqualTo(bound);
    }

    private static final Duration TOOL_TTL = Duration.ofSeconds(6);

    /** As precisely as every store keeps a time. */
    private static Instant millis(Instant instant) {
        return instant.truncatedTo(ChronoUnit.MILLIS);
    }

    private ExecutionRequest codeCallingAcct(String marker) {
        return ExecutionRequest.of("return await tools.acct.private_items({}) // " + marker, Map.of());
    }

    @Test
    void answersOfDifferentlyConfiguredServersStayApartAndIdenticalConfigurationsShare() {
        ServerThroughCache alice = new ServerThroughCache(store, clock, "identity-a", "alice's", TOOL_TTL);
        ServerThroughCache bob = new ServerThroughCache(store, clock, "identity-b", "bob's", TOOL_TTL);
        ServerThroughCache aliceElsewhere = new ServerThroughCache(store, clock, "identity-a", "alice's", TOOL_TTL);
        CachedExecutor aliceRuns = alice.executor(store, clock, "project-a");
        CachedExecutor bobRuns = bob.executor(store, clock, "project-b");
        CachedExecutor aliceElsewhereRuns = aliceElsewhere.executor(store, clock, "project-a2");

        assertThat(alice.read().result().json()).contains("alice's");
        assertThat(bob.read().result().json()).contains("bob's");
        assertThat(alice.read().status()).isEqualTo(CacheStatus.HIT);
        ToolCallOutcome shared = aliceElsewhere.read();
        assertThat(shared.status()).isEqualTo(CacheStatus.HIT);
        assertThat(shared.result().json()).contains("alice's");
        assertThat(aliceElsewhere.served).hasValue(0);

        ExecutionRequest run = codeCallingAcct("run");
        assertThat(aliceRuns.execute(run).result().value()).contains("alice's");
        ExecutionOutcome bobsRun = bobRuns.execute(run);
        assertThat(bobsRun.status()).isEqualTo(CacheStatus.MISS);
        assertThat(bobsRun.result().value()).contains("bob's");
        assertThat(aliceRuns.execute(run).status()).isEqualTo(CacheStatus.HIT);
        ExecutionOutcome sharedRun = aliceElsewhereRuns.execute(run);
        assertThat(sharedRun.status()).isEqualTo(CacheStatus.HIT);
        assertThat(sharedRun.result().value()).contains("alice's");
        assertThat(bobRuns.execute(run).result().value()).contains("bob's");
    }

    @Test
    void aRunIsKeptNoLongerThanTheEarliestToolAnswerItUsed() {
        ServerThroughCache acct = new ServerThroughCache(store, clock, "identity-a", "alice's", TOOL_TTL);
        CachedExecutor runs = acct.executor(store, clock, "project-a");

        ExecutionOutcome first = runs.execute(codeCallingAcct("first"));
        Instant firstStored = clock.instant();
        clock.advance(Duration.ofSeconds(4));
        ExecutionOutcome second = runs.execute(codeCallingAcct("second"));

        assertThat(second.toolCalls()).extracting(ToolCallRecord::status).containsExactly(CacheStatus.HIT);
        assertThat(millis(store.peek(first.key()).orElseThrow().expiresAt())).isEqualTo(millis(firstStored.plus(TOOL_TTL)));
        assertThat(millis(store.peek(second.key()).orElseThrow().expiresAt()))
                .as("a hit with 2 s left gives the run 2 s").isEqualTo(millis(clock.instant().plusSeconds(2)));
        clock.advance(Duration.ofSeconds(2));
        // never a hit once the answer expired: the run's call is asked again (the server answers the first
        // time, the tool cache the second), and since it answers as before the run is revalidated, not run
        assertThat(runs.execute(codeCallingAcct("first")).status()).isEqualTo(CacheStatus.REVALIDATED);
        assertThat(runs.execute(codeCallingAcct("second")).status()).isEqualTo(CacheStatus.REVALIDATED);
        assertThat(acct.served).hasValue(2);
    }

    @Test
    void runsThatUsedAnAnswerAreRemovedWithIt() {
        ServerThroughCache acct = new ServerThroughCache(store, clock, "identity-a", "alice's", TOOL_TTL);
        CachedExecutor runs = acct.executor(store, clock, "project-a");
        ExecutionRequest run = codeCallingAcct("run");
        String toolFree = runs.execute(ExecutionRequest.of("return 1", Map.of())).key();

        String key = runs.execute(run).key();
        acct.cache.policy().clear("acct__*");
        assertThat(store.peek(key)).as("removed with the answers of a cleared tool").isEmpty();

        runs.execute(run);
        runs.policy().clear(CacheKeys.toolCallPattern(ServerThroughCache.READ));
        assertThat(store.peek(key)).as("removed with the answers cleared by key").isEmpty();

        runs.execute(run);
        acct.write();
        assertThat(store.peek(key)).as("removed with the answers a write made stale").isEmpty();

        runs.execute(run);
        acct.versions.set(ServerThroughCache.READ, "mcp:definition2+identity-a");
        assertThat(store.peek(key)).as("removed with the answers of the tool's old version").isEmpty();

        assertThat(store.peek(toolFree)).isPresent();
    }

    /** A run is no fresher than its answers: one whose answer was not stored is kept only for revalidation. */
    @Test
    void anAnswerReadWhileAWriteToItsServerStartedIsNotKeptAndARunThatUsedItIsNeverAHit() {
        ServerThroughCache acct = new ServerThroughCache(store, clock, "identity-a", "alice's", TOOL_TTL);
        CachedExecutor runs = acct.executor(store, clock, "project-a");
        acct.duringRead = acct::write;

        ToolCallOutcome raced = acct.read();
        ExecutionOutcome racedRun = runs.execute(codeCallingAcct("run"));

        assertThat(raced.status()).isEqualTo(CacheStatus.MISS);
        assertThat(raced.expiresAt()).isNull();
        assertThat(racedRun.notStoredBecause()).contains("was not stored")
                .contains("started or ended while it was asked");
        assertThat(store.peek(racedRun.key())).isEmpty();
        assertThat(store.counters().totals()).containsEntry(Counter.UNCACHEABLE_STALE_TOOL_ANSWER, 2L)
                .containsEntry(Counter.UNCACHEABLE_TOOL_ANSWER_NOT_STORED, 1L);
        // asked again while the write still races: revalidated, never a hit, and still not stored
        ExecutionOutcome racedAgain = runs.execute(codeCallingAcct("run"));
        assertThat(racedAgain.status()).isEqualTo(CacheStatus.REVALIDATED);
        assertThat(racedAgain.expiresAt()).isNull();
        acct.duringRead = () -> { };
        assertThat(acct.read().status()).isEqualTo(CacheStatus.MISS);
        assertThat(acct.read().status()).isEqualTo(CacheStatus.HIT);
        // its answer stored now, the run is too
        assertThat(runs.execute(codeCallingAcct("run")).status()).isEqualTo(CacheStatus.REVALIDATED);
        assertThat(runs.execute(codeCallingAcct("run")).status()).isEqualTo(CacheStatus.HIT);
    }

    @Test
    void aServersWriteGenerationStartsAtZeroAndAdvancesByOneLeavingOtherServersAlone() {
        WriteGenerations writes = store.writeGenerations();
        assertThat(writes.current("acct")).isZero();

        writes.advance("acct");
        writes.advance("acct");

        assertThat(writes.current("acct")).isEqualTo(2);
        assertThat(writes.current("docs")).isZero();
    }

    @Test
    void aPutOnConditionStoresAsAPutWhileNoGenerationItWasReadAtMoved() {
        store.writeGenerations().advance("acct");

        Optional<List<String>> put = store.writeGenerations().putIfCurrent(
                entry("k1", "\"fresh\"", Map.of("acct__read", "v1")), null, Map.of("acct", 1L, "docs", 0L));

        assertThat(put).contains(List.of());
        assertThat(store.get("k1").orElseThrow().value()).isEqualTo("\"fresh\"");
        assertThat(store.removeByTool("acct__read")).as("indexed by its tools as a put is").isEqualTo(1);
    }

    @Test
    void aPutOnConditionStoresNothingOnceAGenerationItWasReadAtMoved() {
        store.put(entry("k1", "\"old\"", Map.of()));
        Map<String, Long> seen = Map.of("acct", store.writeGenerations().current("acct"), "docs", 0L);
        store.writeGenerations().advance("acct");

        assertThat(store.writeGenerations().putIfCurrent(entry("k1", "\"raced\"", Map.of()), null, seen)).isEmpty();
        assertThat(store.writeGenerations().putIfCurrent(entry("k2"), new GroupBound("tool:acct__*", 10), seen))
                .isEmpty();

        assertThat(store.peek("k1").orElseThrow().value()).as("left as it was").isEqualTo("\"old\"");
        assertThat(store.peek("k2")).isEmpty();
        assertThat(store.size()).isEqualTo(1);
    }

    @Test
    void aPutOnConditionKeepsItsGroupsBound() {
        GroupBound bound = new GroupBound("tool:acct__*", 2);
        Map<String, Long> seen = Map.of("acct", 0L);

        store.writeGenerations().putIfCurrent(entry("k1"), bound, seen);
        store.writeGenerations().putIfCurrent(entry("k2"), bound, seen);
        Optional<List<String>> third = store.writeGenerations().putIfCurrent(entry("k3"), bound, seen);

        assertThat(third).contains(List.of("k1"));
        assertThat(store.peek("k1")).isEmpty();
        assertThat(store.peek("k3")).isPresent();
    }

    @Test
    void writeGenerationsOutliveClearAndZeroedCounters() {
        store.writeGenerations().advance("acct");

        store.clear();
        store.counters().zero();

        assertThat(store.writeGenerations().current("acct")).as("a noted generation is never met again").isEqualTo(1);
    }

    @Test
    void noAdvanceIsLostUnderManyThreads() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int thread = 0; thread < 4; thread++) {
                done.add(pool.submit(() -> {
                    for (int i = 0; i < 50; i++) {
                        store.writeGenerations().advance("acct");
                    }
                }));
            }
            for (Future<?> each : done) {
                each.get(2, TimeUnit.MINUTES);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(store.writeGenerations().current("acct")).isEqualTo(200);
    }

    private static final Duration SESSION_IDLE = Duration.ofMinutes(30);

    @Test
    void anOpenSessionIsKnownWithItsOwnerAndAnIdNeverOpenedIsNot() {
        store.sessions().open("s1", "owner-a", SESSION_IDLE);

        assertThat(store.sessions().use("s1", SESSION_IDLE)).contains("owner-a");
        assertThat(store.sessions().use("s2", SESSION_IDLE)).isEmpty();
        assertThat(store.sessions().end("s2")).isFalse();
    }

    @Test
    void anEndedSessionIsGone() {
        store.sessions().open("s1", "owner-a", SESSION_IDLE);
        store.sessions().open("s2", "owner-a", SESSION_IDLE);

        assertThat(store.sessions().end("s1")).isTrue();

        assertThat(store.sessions().use("s1", SESSION_IDLE)).isEmpty();
        assertThat(store.sessions().end("s1")).as("ended once").isFalse();
        assertThat(store.sessions().use("s2", SESSION_IDLE)).as("another session stays").contains("owner-a");
    }

    @Test
    void aSessionUnusedPastItsIdleLimitIsGoneAndEachUseStartsTheLimitAgain() {
        store.sessions().open("used", "owner-a", SESSION_IDLE);
        store.sessions().open("unused", "owner-b", SESSION_IDLE);

        clock.advance(SESSION_IDLE.minusMinutes(1));
        assertThat(store.sessions().use("used", SESSION_IDLE)).contains("owner-a");
        clock.advance(Duration.ofMinutes(2));

        assertThat(store.sessions().use("unused", SESSION_IDLE)).isEmpty();
        assertThat(store.sessions().end("unused")).isFalse();
        assertThat(store.sessions().use("used", SESSION_IDLE)).contains("owner-a");
    }

    /** 10,000 by the rules; a store over the network may lower it to keep the suite quick. */
    protected int operationsPerThreadForConcurrencyTest() {
        return 10_000;
    }
}
