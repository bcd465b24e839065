package dev.execache.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.CacheStore;
import dev.execache.core.spi.Sandbox;
import dev.execache.core.spi.StoreCounters;
import java.lang.Thread.State;
import java.net.ConnectException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class CachedExecutorTest {
    private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final ScriptedSandbox sandbox = ScriptedSandbox.echo();
    private final MutableToolVersions tools = new MutableToolVersions(Map.of("github", "v1", "sql", "3"));
    private SimpleStore stored;
    private SwitchableStore store;
    private CachedExecutor executor;

    @BeforeEach
    void setUp() {
        stored = new SimpleStore(clock);
        store = new SwitchableStore(stored);
        executor = CachedExecutor.builder(sandbox, store).toolVersions(tools).clock(clock).build();
    }

    private static ExecutionRequest request(String code) {
        return ExecutionRequest.of(code, Map.of("limit", 10));
    }

    @Test
    void missRunsAndStoresThenHitReturnsStoredResultWithoutRunning() {
        ExecutionOutcome miss = executor.execute(request("return 1"));
        ExecutionOutcome hit = executor.execute(request("return 1"));

        assertThat(sandbox.executions()).isEqualTo(1);
        assertThat(miss.status()).isEqualTo(CacheStatus.MISS);
        assertThat(hit.status()).isEqualTo(CacheStatus.HIT);
        assertThat(hit.key()).isEqualTo(miss.key());
        assertThat(hit.result().value()).isEqualTo("\"return 1\"");
        assertThat(hit.result().console()).isEqualTo("ran");
        assertThat(hit.saved()).isPositive().isLessThanOrEqualTo(Duration.ofMillis(250));
    }

    @Test
    void contextKeyOrderDoesNotMatter() {
        Map<String, Object> ab = new LinkedHashMap<>();
        ab.put("a", 1);
        ab.put("b", 2);
        Map<String, Object> ba = new LinkedHashMap<>();
        ba.put("b", 2);
        ba.put("a", 1.0);

        executor.execute(ExecutionRequest.of("return context", ab));
        ExecutionOutcome second = executor.execute(ExecutionRequest.of("return context", ba));

        assertThat(second.status()).isEqualTo(CacheStatus.HIT);
        assertThat(sandbox.executions()).isEqualTo(1);
    }

    @Test
    void errorsAndTimeoutsAreNeverStored() {
        for (ErrorType type : List.of(ErrorType.RUNTIME_ERROR, ErrorType.TIMEOUT_ERROR)) {
            sandbox.answer(request -> ExecutionResult.failure(new ExecutionError(type, "boom"), "", Duration.ofMillis(5)));

            ExecutionOutcome first = executor.execute(request("fails with " + type));
            ExecutionOutcome second = executor.execute(request("fails with " + type));

            assertThat(first.result().error().type()).isEqualTo(type);
            assertThat(second.status()).isEqualTo(CacheStatus.MISS);
        }
        assertThat(sandbox.executions()).isEqualTo(4);
        assertThat(executor.policy().stats().entries()).isZero();
    }

    @Test
    void expiredResultRunsAgain() {
        executor.execute(request("return 1"));
        clock.advance(CachePolicy.DEFAULT_TTL.minusSeconds(1));
        assertThat(executor.execute(request("return 1")).status()).isEqualTo(CacheStatus.HIT);

        clock.advance(Duration.ofSeconds(1));

        assertThat(executor.execute(request("return 1")).status()).isEqualTo(CacheStatus.MISS);
        assertThat(sandbox.executions()).isEqualTo(2);
    }

    @Test
    void configuredTtlIsUsed() {
        executor = CachedExecutor.builder(sandbox, store).toolVersions(tools).cachePolicy(CachePolicy.DEFAULTS.withTtl(Duration.ofSeconds(90))).clock(clock).build();
        executor.execute(request("return 1"));

        clock.advance(Duration.ofSeconds(90));

        assertThat(executor.execute(request("return 1")).status()).isEqualTo(CacheStatus.MISS);
    }

    @Test
    void disabledCacheNeitherReadsNorStoresAndCountsEachRunAsBypassed() {
        executor = CachedExecutor.builder(sandbox, store).toolVersions(tools).cachePolicy(CachePolicy.DEFAULTS.withEnabled(false)).clock(clock).build();

        ExecutionOutcome first = executor.execute(request("return 1"));
        ExecutionOutcome second = executor.execute(request("return 1"));

        assertThat(first.status()).isEqualTo(CacheStatus.BYPASS);
        assertThat(second.status()).isEqualTo(CacheStatus.BYPASS);
        assertThat(sandbox.executions()).isEqualTo(2);
        assertThat(store.calls()).as("one count per run, nothing else").isEqualTo(2);
        assertThat(store.entries()).isEmpty();
        assertThat(executor.policy().stats().bypassed()).isEqualTo(2);
        assertThat(executor.policy().stats().hits() + executor.policy().stats().misses()).isZero();
    }

    @Test
    void concurrentIdenticalRequestsRunOnceAndAllGetTheResult() throws Exception {
        List<ExecutionOutcome> outcomes = runTogether(32, () -> sandbox.answer(request ->
                ExecutionResult.success("42", "", Duration.ofMillis(100))));

        assertThat(sandbox.executions()).isEqualTo(1);
        assertThat(outcomes).hasSize(32).allSatisfy(outcome -> assertThat(outcome.result().value()).isEqualTo("42"));
        assertThat(outcomes).filteredOn(outcome -> outcome.status() == CacheStatus.MISS).hasSize(1);
    }

    @Test
    void concurrentIdenticalRequestsShareAFailureAndStoreNothing() throws Exception {
        List<ExecutionOutcome> outcomes = runTogether(32, () -> sandbox.answer(request ->
                ExecutionResult.failure(new ExecutionError(ErrorType.RUNTIME_ERROR, "boom"), "", Duration.ofMillis(100))));

        assertThat(sandbox.executions()).isEqualTo(1);
        assertThat(outcomes).hasSize(32).allSatisfy(outcome ->
                assertThat(outcome.result().error().message()).isEqualTo("boom"));
        assertThat(executor.policy().stats().entries()).isZero();
    }

    @Test
    void everyCallOfAConcurrentBurstIsCountedAsAHitAMissOrShared() throws Exception {
        List<ExecutionOutcome> outcomes = runTogether(20, () -> sandbox.answer(request ->
                ExecutionResult.success("42", "", Duration.ofMillis(100))));

        CacheStats stats = executor.policy().stats();
        assertThat(stats.misses()).isEqualTo(1);
        assertThat(stats.shared()).isEqualTo(19);
        assertThat(stats.hits() + stats.misses() + stats.shared()).isEqualTo(outcomes.size());
    }

    @Test
    void callsWaitingOnARunThatIsCancelledRunTheRequestThemselves() throws Exception {
        CountDownLatch leaderRunning = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger runs = new AtomicInteger();
        Sandbox firstIsCancelled = (request, tools) -> {
            if (runs.incrementAndGet() == 1) {
                leaderRunning.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                throw new CancellationException("the caller went away");
            }
            return ExecutionResult.success("7", "", Duration.ofMillis(5));
        };
        CachedExecutor cancelling = CachedExecutor.builder(firstIsCancelled, store).toolVersions(tools).clock(clock).build();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<ExecutionOutcome> leader = pool.submit(() -> cancelling.execute(request("return 7")));
            leaderRunning.await();
            Future<ExecutionOutcome> waiter = pool.submit(() -> cancelling.execute(request("return 7")));
            awaitWaiting(waiter, pool);
            release.countDown();

            assertThat(org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                    () -> leader.get(1, TimeUnit.MINUTES)).getCause())
                    .isInstanceOf(CancellationException.class);
            ExecutionOutcome outcome = waiter.get(1, TimeUnit.MINUTES);
            assertThat(outcome.result().value()).isEqualTo("7");
            assertThat(outcome.status()).isEqualTo(CacheStatus.MISS);
            assertThat(runs.get()).isEqualTo(2);
        } finally {
            pool.shutdownNow();
        }
    }

    /** Waits until the pool's second thread is parked in awaitShared. */
    private static void awaitWaiting(Future<?> waiter, ExecutorService pool) {
        await().alias("the second call waits for the first").atMost(Duration.ofSeconds(30))
                .pollInSameThread().pollInterval(Duration.ofMillis(1))
                .failFast("the second call never waited for the first", waiter::isDone)
                .until(() -> Thread.getAllStackTraces().entrySet().stream()
                        .anyMatch(entry -> entry.getKey().getState() == State.WAITING
                                && Arrays.stream(entry.getValue())
                                        .anyMatch(frame -> frame.getMethodName().equals("awaitShared"))));
    }

    /**
     * Sends {@code threads} identical requests at once. The one execution holds until every
     * other thread is parked waiting for it, so none can arrive after it finished.
     */
    private List<ExecutionOutcome> runTogether(int threads, Runnable configureAnswer) throws Exception {
        configureAnswer.run();
        List<Thread> workers = new ArrayList<>();
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(threads, runnable -> {
            Thread thread = new Thread(runnable);
            workers.add(thread);
            return thread;
        });
        Sandbox holdsUntilOthersWait = (request, tools) -> {
            awaitOthersParked(workers);
            return sandbox.execute(request);
        };
        CachedExecutor together = CachedExecutor.builder(holdsUntilOthersWait, store).toolVersions(tools).clock(clock).build();
        try {
            List<Future<ExecutionOutcome>> futures = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                futures.add(pool.submit(() -> {
                    start.await();
                    return together.execute(request("return 42"));
                }));
            }
            start.countDown();
            List<ExecutionOutcome> outcomes = new ArrayList<>();
            for (Future<ExecutionOutcome> future : futures) {
                outcomes.add(future.get(1, TimeUnit.MINUTES));
            }
            return outcomes;
        } finally {
            pool.shutdownNow();
        }
    }

    private static void awaitOthersParked(List<Thread> workers) {
        Thread holder = Thread.currentThread();
        await().alias("the other threads wait for the running execution").atMost(Duration.ofSeconds(30))
                .pollInSameThread().pollInterval(Duration.ofMillis(1))
                .until(() -> workers.stream().filter(thread -> thread != holder)
                        .filter(thread -> thread.getState() == State.WAITING && isJoining(thread))
                        .count() == workers.size() - 1);
    }

    private static boolean isJoining(Thread thread) {
        for (StackTraceElement frame : thread.getStackTrace()) {
            if (frame.getMethodName().equals("awaitShared")) {
                return true;
            }
        }
        return false;
    }

    @Test
    void versionChangeRemovesOnlyEntriesOfThatTool() {
        executor.execute(request("uses github").withTools(Set.of("github")));
        executor.execute(request("uses sql").withTools(Set.of("sql")));

        tools.set("github", "v2");

        assertThat(executor.policy().stats().entries()).isEqualTo(1);
        assertThat(executor.policy().stats().invalidations()).isEqualTo(1);
        assertThat(executor.execute(request("uses sql").withTools(Set.of("sql"))).status()).isEqualTo(CacheStatus.HIT);
        assertThat(executor.execute(request("uses github").withTools(Set.of("github"))).status()).isEqualTo(CacheStatus.MISS);
    }

    @Test
    void requestDeclaringNoToolDependsOnEveryKnownTool() {
        executor.execute(request("no tools declared"));

        tools.set("sql", "4");

        assertThat(executor.execute(request("no tools declared")).status()).isEqualTo(CacheStatus.MISS);
    }

    @Test
    void unknownDeclaredToolIsAnError() {
        assertThatThrownBy(() -> executor.execute(request("x").withTools(Set.of("jira"))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown tool 'jira'")
                .hasMessageContaining("github, sql");
        assertThat(sandbox.executions()).isZero();
    }

    @Test
    void oneShotProcessWithANewVersionInvalidatesWhatTheStoreSawBefore() {
        executor.execute(request("uses github").withTools(Set.of("github")));
        executor.execute(request("uses sql").withTools(Set.of("sql")));

        MutableToolVersions nextRun = new MutableToolVersions(Map.of("github", "v2", "sql", "3"));
        CachedExecutor next = CachedExecutor.builder(sandbox, store).toolVersions(nextRun).clock(clock).build();
        List<Invalidation> invalidations = next.policy().synchronizeToolVersions();

        assertThat(invalidations).containsExactly(new Invalidation("github", "v1", "v2", 1));
        assertThat(next.execute(request("uses sql").withTools(Set.of("sql"))).status()).isEqualTo(CacheStatus.HIT);
        assertThat(next.execute(request("uses github").withTools(Set.of("github"))).status()).isEqualTo(CacheStatus.MISS);
    }

    @Test
    void aProcessThatFindsEveryVersionAsLastSeenWritesNoVersionsAndOneThatFindsAChangeWritesOnlyIt() {
        executor.execute(request("uses github").withTools(Set.of("github")));
        int recordedBefore = stored.recorded().size();

        CachedExecutor same = CachedExecutor.builder(sandbox, store).toolVersions(new MutableToolVersions(Map.of("github", "v1", "sql", "3"))).clock(clock).build();
        assertThat(same.execute(request("uses github").withTools(Set.of("github"))).status()).isEqualTo(CacheStatus.HIT);
        assertThat(stored.recorded()).hasSize(recordedBefore);

        CachedExecutor upgraded = CachedExecutor.builder(sandbox, store).toolVersions(new MutableToolVersions(Map.of("github", "v2", "sql", "3"))).clock(clock).build();
        assertThat(upgraded.policy().synchronizeToolVersions()).containsExactly(new Invalidation("github", "v1", "v2", 1));
        assertThat(stored.recorded()).hasSize(recordedBefore + 1).last().isEqualTo(Map.of("github", "v2"));
        assertThat(store.lastSeenVersions(CacheStore.DEFAULT_SCOPE)).isEqualTo(Map.of("github", "v2", "sql", "3"));
    }

    @Test
    void projectsSharingAStoreWithDifferentVersionsOfAToolNeverInvalidateEachOther() {
        for (int round = 0; round < 3; round++) {
            for (String version : List.of("v1", "v2")) {
                CachedExecutor project = CachedExecutor.builder(sandbox, store).toolVersions(new MutableToolVersions(Map.of("github", version))).clock(clock).versionScope("/projects/" + version + "/execache.yaml").build();

                assertThat(project.policy().synchronizeToolVersions()).as("round %d, github %s", round, version).isEmpty();
                assertThat(project.execute(request("uses github").withTools(Set.of("github"))).status())
                        .isEqualTo(round == 0 ? CacheStatus.MISS : CacheStatus.HIT);
            }
        }
        assertThat(sandbox.executions()).isEqualTo(2);
    }

    @Test
    void aNewVersionInOneProjectRemovesOnlyEntriesMadeWithTheOldOne() {
        CachedExecutor one = CachedExecutor.builder(sandbox, store).toolVersions(new MutableToolVersions(Map.of("github", "v1"))).clock(clock).versionScope("one").build();
        CachedExecutor two = CachedExecutor.builder(sandbox, store).toolVersions(new MutableToolVersions(Map.of("github", "v2"))).clock(clock).versionScope("two").build();
        one.execute(request("uses github").withTools(Set.of("github")));
        two.execute(request("uses github").withTools(Set.of("github")));

        CachedExecutor oneUpgraded = CachedExecutor.builder(sandbox, store).toolVersions(new MutableToolVersions(Map.of("github", "v2"))).clock(clock).versionScope("one").build();

        assertThat(oneUpgraded.policy().synchronizeToolVersions()).containsExactly(new Invalidation("github", "v1", "v2", 1));
        assertThat(oneUpgraded.execute(request("uses github").withTools(Set.of("github"))).status())
                .as("project two's entry, made with v2, stayed").isEqualTo(CacheStatus.HIT);
    }

    @Test
    void aVersionChangeToldWhileRunningRemovesOnlyEntriesMadeWithTheOldVersion() {
        executor.execute(request("uses github").withTools(Set.of("github")));
        store.put(new CacheEntry("v1:another-project", "1", "", Duration.ZERO, Map.of("github", "v3"), clock.instant(),
                clock.instant().plusSeconds(60), 0));

        tools.set("github", "v3");

        assertThat(store.peek("v1:another-project")).isPresent();
        assertThat(executor.policy().stats().invalidations()).isEqualTo(1);
    }

    @Test
    void statsCountHitsMissesAndLatencySaved() {
        executor.execute(request("a"));
        executor.execute(request("a"));
        executor.execute(request("a"));
        executor.execute(request("b"));

        CacheStats stats = executor.policy().stats();

        assertThat(stats.hits()).isEqualTo(2);
        assertThat(stats.misses()).isEqualTo(2);
        assertThat(stats.hitRate()).isEqualTo(0.5);
        assertThat(stats.entries()).isEqualTo(2);
        assertThat(stats.totalSaved()).isPositive().isLessThanOrEqualTo(Duration.ofMillis(500));
        assertThat(stats.averageSaved()).isEqualTo(stats.totalSaved().dividedBy(2));
    }

    @Test
    void brokenStoreNeverFailsARunAndIsUsedAgainWhenBack() {
        executor.execute(request("a"));
        store.fail(true);

        ExecutionOutcome during = executor.execute(request("a"));
        ExecutionOutcome during2 = executor.execute(request("b"));

        assertThat(during.status()).isEqualTo(CacheStatus.STORE_ERROR);
        assertThat(during.result().value()).isEqualTo("\"a\"");
        assertThat(during2.result().isSuccess()).isTrue();
        assertThat(executor.policy().stats().storeErrors()).isPositive();

        store.fail(false);
        assertThat(executor.execute(request("a")).status()).isEqualTo(CacheStatus.HIT);
        executor.execute(request("c"));
        assertThat(executor.execute(request("c")).status()).isEqualTo(CacheStatus.HIT);
        assertThat(executor.policy().stats().storeErrors()).as("errors of the outage reach the store's counter").isPositive();
    }

    @Test
    void countsRefusedInAnOutageKeepAtMostTheCapOfAgentsAndReachTheStoreWhenItIsBack() {
        store.fail(true);
        for (int i = 0; i <= StoreCounters.MAX_AGENTS; i++) {
            executor.execute(request("a").withAgent("agent-" + i));
        }

        assertThat(executor.policy().stats().agents()).hasSize(StoreCounters.MAX_AGENTS + 1)
                .containsKey(StoreCounters.OTHER_AGENT).doesNotContainKey("agent-" + StoreCounters.MAX_AGENTS);

        store.fail(false);
        executor.execute(request("b").withAgent("agent-0"));

        Map<String, ToolStats> agents = executor.policy().stats().agents();
        assertThat(agents).hasSize(StoreCounters.MAX_AGENTS + 1);
        assertThat(agents.get("agent-0").misses()).isEqualTo(2);
        assertThat(agents.get(StoreCounters.OTHER_AGENT).misses()).isEqualTo(1);
    }

    @Test
    void anOutageIsLoggedOnceAndItsEndOnce() {
        Logger logger = Logger.getLogger("dev.execache.core");
        List<LogRecord> records = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord record) {
                records.add(record);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        logger.addHandler(capture);
        try {
            executor.execute(request("a"));
            store.fail(true);
            executor.execute(request("a"));
            executor.execute(request("b"));
            executor.execute(request("c"));
            store.fail(false);
            executor.execute(request("a"));
            executor.execute(request("d"));
        } finally {
            logger.removeHandler(capture);
        }

        assertThat(records).filteredOn(record -> record.getMessage().contains("running uncached")).hasSize(1);
        assertThat(records).filteredOn(record -> record.getMessage().contains("caching resumed")).hasSize(1);
    }

    @Test
    void aStoreThatReadsButCannotWriteIsLoggedOnceNotOnEveryRun() {
        Logger logger = Logger.getLogger("dev.execache.core");
        List<LogRecord> records = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord record) {
                records.add(record);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        logger.addHandler(capture);
        try {
            executor.execute(request("a"));
            store.failWrites(true);
            for (String code : List.of("a", "b", "c", "a", "d")) {
                assertThat(executor.execute(request(code)).result().value()).isEqualTo("\"" + code + "\"");
            }
        } finally {
            logger.removeHandler(capture);
        }

        assertThat(records).filteredOn(record -> record.getLevel() == Level.WARNING).hasSize(1)
                .allSatisfy(record -> assertThat(record.getMessage()).contains("refuses writes").contains("still serves"));
        assertThat(records).filteredOn(record -> record.getMessage().contains("caching resumed")).isEmpty();
    }

    /**
     * A SQLite file on a full disk: storing fails, counting works (the store keeps counts until
     * its next write). One warning for the outage, however many runs meet it, and no line saying
     * it ended: a count proves nothing about storing.
     */
    @Test
    void aStoreThatCountsButCannotStoreIsOneOutageNotALinePerRun() {
        List<LogRecord> records = captureCoreLog(() -> {
            executor.execute(request("a"));
            store.failPuts(true);
            for (int n = 0; n < 24; n++) {
                assertThat(executor.execute(request("new " + n)).status()).isEqualTo(CacheStatus.STORE_ERROR);
                assertThat(executor.execute(request("a")).status()).isEqualTo(CacheStatus.HIT);
            }
        });

        assertThat(records).singleElement().satisfies(record -> assertThat(record.getMessage())
                .startsWith("cache store refuses writes").contains("SQLITE_FULL"));
    }

    /**
     * A store that dies between the read and the write of one call (a killed Redis): its first
     * failure is a write, and it is described as what it is, down, not as a store that still reads.
     * Its end is one line, counting the runs it touched as runs and the failed operations apart.
     */
    @Test
    void aStoreThatCannotBeReachedIsDownWhicheverOperationMetItFirst() {
        List<LogRecord> records = captureCoreLog(() -> {
            executor.execute(request("a"));
            store.failWrites(() -> new IllegalStateException("cannot reach the store (test)",
                    new ConnectException("connection refused")));
            executor.execute(request("b"));
            store.fail(true);
            executor.execute(request("c"));
            executor.execute(request("d"));
            store.fail(false);
            store.failWrites(false);
            executor.execute(request("e"));
        });

        assertThat(records).hasSize(2);
        assertThat(records.get(0).getMessage()).startsWith("cache store cannot be reached").contains("connection refused")
                .doesNotContain("refuses writes", "still serves");
        assertThat(records.get(1).getMessage()).matches("cache store answers again after 3 calls ran uncached"
                + " \\((\\d+) store operations failed\\); caching resumed");
    }

    /** Two faces given one guard of their store (as in serve): one outage, one warning, one line when it ends. */
    @Test
    void everyFaceGivenOneGuardSharesItsStoresOutage() {
        StoreGuard guard = StoreGuard.of(store);
        CachedExecutor executor = CachedExecutor.builder(sandbox, guard).toolVersions(tools).clock(clock).build();
        CachedTool tool = CachedTool.builder((name, args) -> ToolResult.ok("1"), guard).clock(clock).build();
        List<LogRecord> records = captureCoreLog(() -> {
            store.fail(true);
            executor.execute(request("a"));
            tool.call(ToolCallRequest.of("read", Map.of("n", 1))).result();
            executor.execute(request("b"));
            store.fail(false);
            tool.call(ToolCallRequest.of("read", Map.of("n", 2))).result();
            executor.execute(request("c"));
        });

        assertThat(records).extracting(LogRecord::getLevel)
                .containsExactly(Level.WARNING, Level.INFO);
        assertThat(records.get(1).getMessage()).startsWith("cache store answers again after 3 calls ran uncached");
    }

    private static List<LogRecord> captureCoreLog(Runnable work) {
        Logger logger = Logger.getLogger("dev.execache.core");
        List<LogRecord> records = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord record) {
                if (record.getMessage().startsWith("cache store")) {
                    records.add(record);
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        logger.addHandler(capture);
        try {
            work.run();
        } finally {
            logger.removeHandler(capture);
        }
        return records;
    }

    @Test
    void storeThatIsDownFromTheStartStillRuns() {
        store.fail(true);
        CachedExecutor fresh = CachedExecutor.builder(sandbox, store).toolVersions(tools).clock(clock).build();

        ExecutionOutcome outcome = fresh.execute(request("a"));

        assertThat(outcome.result().value()).isEqualTo("\"a\"");
        assertThat(outcome.status()).isEqualTo(CacheStatus.STORE_ERROR);
    }

    @Test
    void aResultThatMayReadAFileIsNotReusedOnceTheFileChanged(@org.junit.jupiter.api.io.TempDir Path dir)
            throws Exception {
        Path data = dir.resolve("data.json");
        Files.writeString(data, "[1,2,3]");
        ExecutionRequest reads = request("return await Deno.readTextFile(path)")
                .withLimits(Limits.DEFAULTS.withAllowRead(List.of(dir.toString())));

        executor.execute(reads);
        assertThat(executor.execute(reads).status()).isEqualTo(CacheStatus.HIT);

        Files.writeString(data, "[1,2,3,4]");

        assertThat(executor.execute(reads).status()).isEqualTo(CacheStatus.MISS);
        assertThat(executor.execute(reads).status()).isEqualTo(CacheStatus.HIT);
        assertThat(executor.policy().keyFor(reads)).matches("v1:[0-9a-f]{32}_[0-9a-f]{32}_[0-9a-f]{32}_[0-9a-f]{32}");
    }

    @Test
    void pathsTooBroadToWatchAreRunUncached(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        for (int i = 0; i <= ReadFingerprint.MAX_FILES; i++) {
            Files.createFile(dir.resolve("f" + i));
        }
        ExecutionRequest reads = request("x").withLimits(Limits.DEFAULTS.withAllowRead(List.of(dir.toString())));

        assertThat(executor.execute(reads).status()).isEqualTo(CacheStatus.BYPASS);
        assertThat(executor.execute(reads).status()).isEqualTo(CacheStatus.BYPASS);
        assertThat(sandbox.executions()).isEqualTo(2);
    }

    @Test
    void clearRemovesEntriesMatchingAKeyGlob() {
        executor.execute(request("a"));
        executor.execute(request("b"));

        assertThat(executor.policy().clear("v1:*")).isEqualTo(2);
        assertThat(executor.policy().stats().entries()).isZero();
    }

    @Test
    void inspectShowsTheEntryWithoutCountingAHit() {
        String key = executor.execute(request("a").withTools(Set.of("github"))).key();

        CacheEntry entry = executor.policy().inspect(key).orElseThrow();

        assertThat(entry.toolVersions()).isEqualTo(Map.of("github", "v1"));
        assertThat(entry.hits()).isZero();
        assertThat(executor.policy().stats().hits()).isZero();
        assertThat(executor.policy().keyFor(request("a").withTools(Set.of("github")))).isEqualTo(key);
    }
}
