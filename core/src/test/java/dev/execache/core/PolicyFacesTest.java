package dev.execache.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.execache.core.spi.Counter;
import dev.execache.core.spi.Sandbox;
import java.lang.Thread.State;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The caching policy, written once and run through both faces: code executions
 * ({@link CachedExecutor}) and tool calls ({@link CachedTool}). Each face wraps the same
 * scripted work: it takes {@link #WORK} by the test's ticker and answers its input as a JSON
 * string, or fails when told to.
 */
class PolicyFacesTest {
    static final Duration WORK = Duration.ofMillis(250);
    static final Duration LOOKUP = Duration.ofMillis(2);
    static final String TOOL = "read";

    final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    final MutableTicker ticker = new MutableTicker();
    final SimpleStore simpleStore = new SimpleStore(clock);
    final SwitchableStore store = new SwitchableStore(simpleStore);
    final MutableToolVersions versions = new MutableToolVersions(Map.of(TOOL, "1"));
    final AtomicInteger runs = new AtomicInteger();
    volatile boolean failing;
    volatile Runnable beforeWork = () -> { };

    /** Does the work every face wraps; returns the answer, or null for a failure. */
    String work(String input) {
        beforeWork.run();
        runs.incrementAndGet();
        ticker.advance(WORK);
        return failing ? null : CanonicalJson.write(input, "input");
    }

    /** One way into the policy. */
    interface Face {
        /** The answer's JSON, or null if the call failed. */
        String call(String input);

        /** The tool whose own counters count this face's calls, or null. */
        String countedTool();
    }

    static Stream<Function<PolicyFacesTest, Face>> faces() {
        return Stream.of(PolicyFacesTest::codeFace, PolicyFacesTest::toolFace);
    }

    Face codeFace() {
        Sandbox sandbox = (request, tools) -> {
            String answer = work((String) ((Map<?, ?>) request.context()).get("input"));
            return answer == null
                    ? ExecutionResult.failure(new ExecutionError(ErrorType.RUNTIME_ERROR, "failed"), "", WORK)
                    : ExecutionResult.success(answer, "", WORK);
        };
        CachedExecutor executor = CachedExecutor.builder(sandbox, store).toolVersions(versions).clock(clock).ticker(ticker).build();
        return new Face() {
            @Override
            public String call(String input) {
                ExecutionResult result = executor.execute(
                        ExecutionRequest.of("return context.input", Map.of("input", input)).withTools(Set.of(TOOL))).result();
                return result.isSuccess() ? result.value() : null;
            }

            @Override
            public String countedTool() {
                return null;
            }

            @Override
            public String toString() {
                return "code";
            }
        };
    }

    Face toolFace() {
        ToolInvoker invoker = (tool, args) -> {
            String answer = work((String) args.get("input"));
            return answer == null ? ToolResult.error("{\"error\":\"failed\"}") : ToolResult.ok(answer);
        };
        CachedTool cached = CachedTool.builder(invoker, store).clock(clock).ticker(ticker).toolVersions(versions).build();
        return new Face() {
            @Override
            public String call(String input) {
                ToolResult result = cached.call(ToolCallRequest.of(TOOL, Map.of("input", input))).result();
                return result.isError() ? null : result.json();
            }

            @Override
            public String countedTool() {
                return TOOL;
            }

            @Override
            public String toString() {
                return "tool";
            }
        };
    }

    @ParameterizedTest
    @MethodSource("faces")
    void aRepeatedCallIsServedFromTheStoreWithoutRunningAndCountedThere(Function<PolicyFacesTest, Face> faceOf) {
        Face face = faceOf.apply(this);

        String first = face.call("a");
        String second = face.call("a");

        assertThat(first).isEqualTo("\"a\"");
        assertThat(second).isEqualTo(first);
        assertThat(runs).hasValue(1);
        assertThat(simpleStore.counters().totals()).containsEntry(Counter.HITS, 1L).containsEntry(Counter.MISSES, 1L);
        if (face.countedTool() != null) {
            assertThat(simpleStore.counters().perTool().get(face.countedTool()))
                    .containsEntry(Counter.HITS, 1L).containsEntry(Counter.MISSES, 1L);
        } else {
            assertThat(simpleStore.counters().perTool()).isEmpty();
        }
    }

    @ParameterizedTest
    @MethodSource("faces")
    void latencySavedIsTheRunsTimeMinusTheHitsOwnLookup(Function<PolicyFacesTest, Face> faceOf) {
        Face face = faceOf.apply(this);
        simpleStore.onGet(() -> ticker.advance(LOOKUP));

        face.call("a");
        face.call("a");
        face.call("a");

        long savedPerHit = WORK.minus(LOOKUP).toNanos();
        assertThat(simpleStore.counters().totals()).containsEntry(Counter.SAVED_NANOS, 2 * savedPerHit);
        if (face.countedTool() != null) {
            assertThat(simpleStore.counters().perTool().get(face.countedTool())).containsEntry(Counter.SAVED_NANOS, 2 * savedPerHit);
        }
    }

    @ParameterizedTest
    @MethodSource("faces")
    void aValueDamagedInTheStoreIsNeverServedButRemovedCountedAndRunAgain(Function<PolicyFacesTest, Face> faceOf) {
        Face face = faceOf.apply(this);
        face.call("a");
        String key = simpleStore.onlyKey();

        simpleStore.damage(key, "\"forged\"");

        assertThat(face.call("a")).isEqualTo("\"a\"");
        assertThat(runs).hasValue(2);
        assertThat(simpleStore.counters().totals()).containsEntry(Counter.DAMAGED, 1L);
        assertThat(simpleStore.counters().totals().getOrDefault(Counter.HITS, 0L)).as("the damaged read is no hit").isZero();
        assertThat(face.call("a")).isEqualTo("\"a\"");
        assertThat(runs).as("the fresh result is served again").hasValue(2);
    }

    @ParameterizedTest
    @MethodSource("faces")
    void aFailureIsNeverStored(Function<PolicyFacesTest, Face> faceOf) {
        Face face = faceOf.apply(this);
        failing = true;

        assertThat(face.call("a")).isNull();
        assertThat(face.call("a")).isNull();

        assertThat(runs).hasValue(2);
        assertThat(simpleStore.size()).isZero();
        assertThat(simpleStore.counters().totals()).containsEntry(Counter.MISSES, 2L).containsEntry(Counter.FAILED, 2L);
        if (face.countedTool() != null) {
            assertThat(simpleStore.counters().perTool().get(face.countedTool())).containsEntry(Counter.FAILED, 2L);
        }
    }

    @ParameterizedTest
    @MethodSource("faces")
    void identicalCallsAtOnceRunOnceAndAllGetTheAnswer(Function<PolicyFacesTest, Face> faceOf) throws Exception {
        Face face = faceOf.apply(this);
        int threads = 16;
        List<Thread> workers = new CopyOnWriteArrayList<>();
        beforeWork = () -> awaitOthersParked(workers);
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(threads, runnable -> {
            Thread thread = new Thread(runnable);
            workers.add(thread);
            return thread;
        });
        try {
            List<Future<String>> answers = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                answers.add(pool.submit(() -> {
                    start.await();
                    return face.call("a");
                }));
            }
            start.countDown();
            for (Future<String> answer : answers) {
                assertThat(answer.get(1, TimeUnit.MINUTES)).isEqualTo("\"a\"");
            }
        } finally {
            pool.shutdownNow();
        }

        assertThat(runs).hasValue(1);
        assertThat(simpleStore.size()).isEqualTo(1);
    }

    @ParameterizedTest
    @MethodSource("faces")
    void aChangedToolVersionRemovesWhatWasMadeWithTheOldOne(Function<PolicyFacesTest, Face> faceOf) {
        Face face = faceOf.apply(this);
        face.call("a");

        versions.set(TOOL, "2");
        face.call("a");

        assertThat(runs).hasValue(2);
        assertThat(simpleStore.counters().totals()).containsEntry(Counter.INVALIDATIONS, 1L);
        assertThat(simpleStore.size()).isEqualTo(1);
    }

    @ParameterizedTest
    @MethodSource("faces")
    void aFailingStoreNeverFailsACallAndIsUsedAgainWhenBack(Function<PolicyFacesTest, Face> faceOf) {
        Face face = faceOf.apply(this);
        store.fail(true);

        assertThat(face.call("a")).isEqualTo("\"a\"");
        assertThat(face.call("a")).isEqualTo("\"a\"");
        assertThat(runs).hasValue(2);

        store.fail(false);
        face.call("a");
        face.call("a");
        assertThat(runs).hasValue(3);
        assertThat(simpleStore.counters().totals().get(Counter.STORE_ERRORS)).as("the outage's errors reach the store").isPositive();
    }

    /** Holds the one run until every other thread waits for it, so none arrives after it finished. */
    private static void awaitOthersParked(List<Thread> workers) {
        Thread holder = Thread.currentThread();
        await().alias("the other threads wait for the running call").atMost(Duration.ofSeconds(30))
                .pollInSameThread().pollInterval(Duration.ofMillis(1))
                .until(() -> workers.stream().filter(thread -> thread != holder)
                        .filter(thread -> thread.getState() == State.WAITING && isAwaitingShared(thread)).count() == 15);
    }

    private static boolean isAwaitingShared(Thread thread) {
        for (StackTraceElement frame : thread.getStackTrace()) {
            if (frame.getMethodName().equals("awaitShared")) {
                return true;
            }
        }
        return false;
    }
}
