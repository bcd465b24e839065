package dev.execache.benchmarks.library;

import dev.execache.benchmarks.support.Progress;
import dev.execache.benchmarks.support.Samples;
import dev.execache.benchmarks.support.Table;
import dev.execache.core.CachePolicy;
import dev.execache.core.CacheStatus;
import dev.execache.core.CachedExecutor;
import dev.execache.core.ExecutionOutcome;
import dev.execache.core.ExecutionRequest;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.spi.CacheStore;
import dev.execache.sandbox.DenoSandbox;
import dev.execache.sandbox.DenoSandboxSettings;
import dev.execache.store.memory.MemoryCacheStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The agent workflow run through each store and with no cache, each run with a fresh warm-pool
 * sandbox. The most a cache can save is the time the no-cache run spent on repeats (every
 * repeat free); what a store saved is the no-cache wall time minus its own.
 */
public final class WorkflowFigures {
    private static final long SEED = 20_250_601;
    private static final CachePolicy POLICY = CachePolicy.DEFAULTS.withTtl(Duration.ofHours(1)).withMaxEntries(1_000);

    private WorkflowFigures() {
    }

    /** A store for one run; closed after it. */
    public record Variant(String name, Supplier<CacheStore> stores) {
    }

    public static void measure(Table table, DenoSandboxSettings settings, List<Variant> stores, Progress progress)
            throws InterruptedException {
        AgentWorkflow workflow = AgentWorkflow.generate(SEED);
        progress.note("workflow: " + workflow.describe());
        table.note("Workflow: " + workflow.describe() + "; seed " + SEED + ".");
        List<ExecutionRequest> requests = workflow.requests();
        boolean[] repeat = repeats(requests);
        int repeats = 0;
        for (boolean r : repeat) {
            repeats += r ? 1 : 0;
        }

        progress.note("workflow: no cache");
        Run uncached = run(settings, new MemoryCacheStore(), POLICY.withEnabled(false), requests);
        double maxSavable = 0;
        for (int i = 0; i < requests.size(); i++) {
            maxSavable += repeat[i] ? uncached.millis[i] : 0;
        }
        table.add("workflow, no cache: " + requests.size() + " requests, " + (requests.size() - repeats)
                        + " distinct (" + workflow.totalWorkMillis() / 1000 + " s of script work)",
                Table.millis(uncached.totalMillis) + ", " + uncached.executions + " executions",
                "", "", "");
        for (Variant variant : stores) {
            progress.note("workflow: " + variant.name());
            Run cached;
            try (CacheStore store = variant.stores().get()) {
                cached = run(settings, store, POLICY, requests);
            }
            double hitRate = (double) cached.hits / requests.size();
            List<Double> hitMillis = new ArrayList<>();
            List<Double> missOverheadMillis = new ArrayList<>();
            for (int i = 0; i < requests.size(); i++) {
                if (repeat[i]) {
                    hitMillis.add(cached.millis[i]);
                } else {
                    missOverheadMillis.add(cached.millis[i] - uncached.millis[i]);
                }
            }
            double saved = uncached.totalMillis - cached.totalMillis;
            double share = saved / maxSavable;
            table.add("workflow, " + variant.name(),
                    Table.millis(cached.totalMillis) + ", " + cached.executions + " executions; hit rate "
                            + Table.percent(hitRate)
                            + " (max " + Table.percent((double) repeats / requests.size()) + "); saved "
                            + Table.percent(share) + " of max " + Table.millis(maxSavable)
                            + "; a hit " + Table.millis(Samples.median(hitMillis)) + ", a miss "
                            + signedMillis(Samples.median(missOverheadMillis)) + " over no cache (medians)",
                    "no cache " + Table.millis(uncached.totalMillis),
                    Table.times(uncached.totalMillis, cached.totalMillis) + " faster",
                    Table.aim("saved ≥ 90% of max", share >= 0.9));
        }
    }

    private static String signedMillis(double millis) {
        return (millis < 0 ? "−" : "+") + Table.millis(Math.abs(millis));
    }

    private record Run(double totalMillis, double[] millis, int hits, int executions) {
    }

    private static Run run(DenoSandboxSettings settings, CacheStore store, CachePolicy policy, List<ExecutionRequest> requests)
            throws InterruptedException {
        try (DenoSandbox deno = new DenoSandbox(settings)) {
            CountingSandbox sandbox = new CountingSandbox(deno);
            sandbox.execute(ExecutionRequest.of("return 0", null));
            WarmPool.await(deno, settings.warmPoolSize());
            CachedExecutor executor = CachedExecutor.builder(sandbox, store).toolVersions(new MutableToolVersions(Map.of())).cachePolicy(policy).build();
            int before = sandbox.executions();
            double[] millis = new double[requests.size()];
            int hits = 0;
            long start = System.nanoTime();
            for (int i = 0; i < requests.size(); i++) {
                long requestStart = System.nanoTime();
                ExecutionOutcome outcome = executor.execute(requests.get(i));
                millis[i] = Samples.millisSince(requestStart);
                if (!outcome.result().isSuccess()) {
                    throw new IllegalStateException("request " + i + " failed: " + outcome.result().error());
                }
                if (outcome.status() == CacheStatus.STORE_ERROR) {
                    throw new IllegalStateException("request " + i + ": the store failed");
                }
                hits += outcome.isHit() ? 1 : 0;
            }
            return new Run(Samples.millisSince(start), millis, hits, sandbox.executions() - before);
        }
    }

    /** Which requests repeat an earlier one exactly, i.e. have the key of an earlier one. */
    private static boolean[] repeats(List<ExecutionRequest> requests) {
        CachedExecutor keys = CachedExecutor.builder((request, tools) -> {
            throw new UnsupportedOperationException("only computes keys");
        }, new MemoryCacheStore()).toolVersions(new MutableToolVersions(Map.of())).cachePolicy(POLICY).build();
        Set<String> seen = new HashSet<>();
        boolean[] repeat = new boolean[requests.size()];
        for (int i = 0; i < requests.size(); i++) {
            repeat[i] = !seen.add(keys.policy().keyFor(requests.get(i)));
        }
        return repeat;
    }
}
