package dev.execache.benchmarks.library;

import dev.execache.core.CachePolicy;
import dev.execache.core.CacheStatus;
import dev.execache.core.CachedExecutor;
import dev.execache.core.CachedTool;
import dev.execache.core.ExecutionOutcome;
import dev.execache.core.ExecutionRequest;
import dev.execache.core.Freshness;
import dev.execache.core.Limits;
import dev.execache.core.MutableClock;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.ToolCacheRule;
import dev.execache.core.ToolCallOutcome;
import dev.execache.core.ToolCallRequest;
import dev.execache.core.ToolResult;
import dev.execache.core.spi.CodeToolCall;
import dev.execache.core.spi.CodeTools;
import dev.execache.sandbox.DenoSandbox;
import dev.execache.sandbox.DenoSandboxSettings;
import dev.execache.store.memory.MemoryCacheStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A workflow whose data changes rarely: a run that reads three tools of 50 ms each and computes
 * over 5 MB, its answers kept 10 s, asked every 2 s for two minutes, with revalidation, without it,
 * and as a plain re-run (no cache). One of the three answers changes once, halfway.
 *
 * <pre>java -cp benchmarks/target/benchmarks.jar dev.execache.benchmarks.library.RevalidationFigures [SECONDS]</pre>
 *
 * <p>The two minutes are the cache's clock (a clock this program moves 2 s between requests), so
 * expiry happens as it would; what is timed is each request's own wall time, with a real Deno
 * sandbox (warm pool of one) and the memory store. The tools are in this process: each sleeps
 * 50 ms before it answers, as a remote API's round trip would take. The plain re-run caches
 * nothing: neither the run nor its tools' answers.
 */
public final class RevalidationFigures {
    private static final Duration TOOL_TIME = Duration.ofMillis(50);
    private static final Duration TTL = Duration.ofSeconds(10);
    private static final Duration EVERY = Duration.ofSeconds(2);
    private static final String CODE = """
            const [a, b, c] = await Promise.all([tools.data.a({}), tools.data.b({}), tools.data.c({})]);
            const bytes = new Uint8Array(5 * 1024 * 1024);
            const seed = a.rows + b.rows * 7 + c.rows * 13;
            let digest = 0;
            for (let i = 0; i < bytes.length; i++) {
              bytes[i] = (i * 31 + seed) & 255;
              digest = (digest * 33 + bytes[i]) | 0;
            }
            return {digest, rows: a.rows + b.rows + c.rows};
            """;

    private RevalidationFigures() {
    }

    public static void main(String[] args) throws Exception {
        Duration span = Duration.ofSeconds(args.length > 0 ? Long.parseLong(args[0]) : 120);
        try (DenoSandbox deno = new DenoSandbox(DenoSandboxSettings.builder().warmPoolSize(1).build())) {
            // one run first, so that no mode pays the sandbox's warm-up
            measure(deno, Mode.PLAIN, Duration.ofSeconds(2));
            System.out.printf(Locale.ROOT, "%d requests, one every %d s of the cache's clock (%d s), TTL %d s, three"
                    + " tools of %d ms, one answer changed halfway%n%n", span.dividedBy(EVERY), EVERY.toSeconds(),
                    span.toSeconds(), TTL.toSeconds(), TOOL_TIME.toMillis());
            System.out.printf(Locale.ROOT, "%-24s %10s %12s %11s %10s  %s%n", "mode", "total", "per request",
                    "tool calls", "Deno runs", "answered as");
            for (Mode mode : Mode.values()) {
                Figures figures = measure(deno, mode, span);
                System.out.printf(Locale.ROOT, "%-24s %8.0f ms %9.1f ms %11d %10d  %s%n", mode.label,
                        figures.total.toNanos() / 1e6, figures.total.toNanos() / 1e6 / figures.requests,
                        figures.toolCalls, figures.denoRuns, figures.statuses);
            }
        }
    }

    private enum Mode {
        REVALIDATION("cache, revalidation"), NO_REVALIDATION("cache, no revalidation"), PLAIN("plain re-run (no cache)");

        final String label;

        Mode(String label) {
            this.label = label;
        }
    }

    private record Figures(int requests, Duration total, int toolCalls, int denoRuns, Map<CacheStatus, Integer> statuses) {
    }

    private static Figures measure(DenoSandbox deno, Mode mode, Duration span) {
        MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
        MemoryCacheStore store = new MemoryCacheStore(100, clock);
        CachePolicy policy = CachePolicy.DEFAULTS.withTtl(TTL).withEnabled(mode != Mode.PLAIN);
        DataServer server = new DataServer(store, clock, mode != Mode.PLAIN);
        CountingSandbox sandbox = new CountingSandbox(deno);
        CachedExecutor.Builder building = CachedExecutor.builder(sandbox, store).toolVersions(server.versions)
                .cachePolicy(policy).clock(clock).codeTools(server);
        if (mode == Mode.NO_REVALIDATION) {
            building.keepForRevalidation(0, 0, Duration.ofHours(1));
        }
        CachedExecutor executor = building.build();
        ExecutionRequest request = new ExecutionRequest(CODE, null, Set.of(), Limits.DEFAULTS);
        Map<CacheStatus, Integer> statuses = new EnumMap<>(CacheStatus.class);
        int requests = (int) span.dividedBy(EVERY);
        long total = 0;
        for (int i = 0; i < requests; i++) {
            if (i == requests / 2) {
                server.rows.get("b").incrementAndGet();
            }
            long start = System.nanoTime();
            ExecutionOutcome outcome = executor.execute(request);
            total += System.nanoTime() - start;
            if (!outcome.result().isSuccess()) {
                throw new IllegalStateException("the run failed: " + outcome.result().error());
            }
            statuses.merge(outcome.status(), 1, Integer::sum);
            clock.advance(EVERY);
        }
        return new Figures(requests, Duration.ofNanos(total), server.served.get(), sandbox.executions(), statuses);
    }

    /** Three read tools, {@code data.a}, {@code data.b}, {@code data.c}, behind the tool cache (TTL 10 s) or asked every time. */
    private static final class DataServer implements CodeTools {
        final MutableToolVersions versions = new MutableToolVersions(Map.of("data__a", "1", "data__b", "1",
                "data__c", "1"));
        final Map<String, AtomicInteger> rows = Map.of("a", new AtomicInteger(100), "b", new AtomicInteger(200),
                "c", new AtomicInteger(300));
        final AtomicInteger served = new AtomicInteger();
        private final CachedTool cache;

        DataServer(MemoryCacheStore store, Clock clock, boolean cached) {
            cache = CachedTool.builder((tool, args) -> {
                served.incrementAndGet();
                try {
                    Thread.sleep(TOOL_TIME.toMillis());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                String table = tool.substring("data__".length());
                return ToolResult.ok("{\"table\":\"" + table + "\",\"rows\":" + rows.get(table).get() + "}");
            }, store).rule(cached ? ToolCacheRule.cache("data__*", TTL, 100) : ToolCacheRule.never("data__*"))
                    .toolVersions(versions).clock(clock).build();
        }

        @Override
        public Map<String, List<String>> reachable() {
            return Map.of("data", List.of("a", "b", "c"));
        }

        @Override
        public CodeToolCall call(String server, String tool, String argumentsJson, String agent, Freshness freshness) {
            String name = server + "__" + tool;
            ToolCallOutcome outcome = cache.call(ToolCallRequest.of(name, Map.of()));
            return new CodeToolCall(name, versions.versions().get(name), outcome, !outcome.result().isError(),
                    outcome.result().json().length(), Map.of());
        }
    }
}
