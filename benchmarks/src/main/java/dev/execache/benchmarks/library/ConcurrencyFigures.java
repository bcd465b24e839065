package dev.execache.benchmarks.library;

import dev.execache.benchmarks.support.Samples;
import dev.execache.benchmarks.support.Table;
import dev.execache.core.CacheStatus;
import dev.execache.core.CachedExecutor;
import dev.execache.core.ExecutionOutcome;
import dev.execache.core.ExecutionRequest;
import dev.execache.core.MutableToolVersions;
import dev.execache.sandbox.DenoSandbox;
import dev.execache.sandbox.DenoSandboxSettings;
import dev.execache.store.memory.MemoryCacheStore;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;

/**
 * {@value #THREADS} threads released at once, each sending the same {@value #REQUESTS}
 * requests (in an order of its own) through one executor on the real sandbox: single flight
 * must run each request once. Beside it, the same requests run once each, one after another,
 * without a cache.
 */
public final class ConcurrencyFigures {
    public static final int THREADS = 32;
    static final int REQUESTS = 10;
    private static final int WORK_MILLIS = 100;

    private ConcurrencyFigures() {
    }

    public static void measure(Table table, DenoSandboxSettings settings) throws Exception {
        List<ExecutionRequest> requests = new ArrayList<>();
        for (int i = 0; i < REQUESTS; i++) {
            requests.add(ExecutionRequest.of(AgentWorkflow.code(100 + i, WORK_MILLIS), Map.of("limit", 10)));
        }
        try (DenoSandbox deno = new DenoSandbox(settings)) {
            deno.execute(ExecutionRequest.of("return 0", null));
            WarmPool.await(deno, settings.warmPoolSize());
            long sequentialStart = System.nanoTime();
            for (ExecutionRequest request : requests) {
                if (!deno.execute(request).isSuccess()) {
                    throw new IllegalStateException("a request failed without the cache");
                }
            }
            double sequentialMillis = Samples.millisSince(sequentialStart);
            WarmPool.await(deno, settings.warmPoolSize());

            CountingSandbox counting = new CountingSandbox(deno);
            CachedExecutor executor = CachedExecutor.builder(counting, new MemoryCacheStore()).toolVersions(new MutableToolVersions(Map.of())).build();
            ExecutorService threads = Executors.newFixedThreadPool(THREADS);
            try {
                CountDownLatch ready = new CountDownLatch(THREADS);
                CountDownLatch go = new CountDownLatch(1);
                List<Future<List<ExecutionOutcome>>> sent = new ArrayList<>();
                for (int t = 0; t < THREADS; t++) {
                    List<ExecutionRequest> order = new ArrayList<>(requests);
                    Collections.shuffle(order, new Random(t));
                    sent.add(threads.submit(() -> {
                        ready.countDown();
                        go.await();
                        List<ExecutionOutcome> outcomes = new ArrayList<>();
                        for (ExecutionRequest request : order) {
                            outcomes.add(executor.execute(request));
                        }
                        return outcomes;
                    }));
                }
                ready.await();
                long start = System.nanoTime();
                go.countDown();
                Map<CacheStatus, Integer> statuses = new EnumMap<>(CacheStatus.class);
                for (Future<List<ExecutionOutcome>> thread : sent) {
                    for (ExecutionOutcome outcome : thread.get()) {
                        if (!outcome.result().isSuccess()) {
                            throw new IllegalStateException("a request failed: " + outcome.result().error());
                        }
                        statuses.merge(outcome.status(), 1, Integer::sum);
                    }
                }
                double millis = Samples.millisSince(start);
                int executions = counting.executions();
                table.note("Concurrency: the threads are released together by a latch, each sends the " + REQUESTS
                        + " requests in its own order; executions are counted by a wrapper around the sandbox.");
                String outcomes = statuses.entrySet().stream()
                        .map(entry -> entry.getValue() + " " + entry.getKey().name().toLowerCase(Locale.ROOT))
                        .collect(Collectors.joining(", "));
                table.add("concurrency: " + THREADS + " threads × the same " + REQUESTS + " requests ("
                                + WORK_MILLIS + " ms of work each), one executor, memory store",
                        Table.millis(millis) + ", " + executions + " executions (" + outcomes + ")",
                        REQUESTS + " runs one after another, no cache " + Table.millis(sequentialMillis),
                        Table.times(sequentialMillis, millis) + " faster",
                        Table.aim("executions = " + REQUESTS, executions == REQUESTS));
            } finally {
                threads.shutdownNow();
            }
        }
    }
}
