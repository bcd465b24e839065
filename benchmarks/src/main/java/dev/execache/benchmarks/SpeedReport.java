package dev.execache.benchmarks;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.execache.benchmarks.library.HitPathFigures;
import dev.execache.benchmarks.library.SandboxFigures;
import dev.execache.benchmarks.process.CliFigures;
import dev.execache.benchmarks.process.RawLineClient;
import dev.execache.benchmarks.process.Serve;
import dev.execache.benchmarks.support.Artifacts;
import dev.execache.benchmarks.support.Machine;
import dev.execache.benchmarks.support.Progress;
import dev.execache.benchmarks.support.Reports;
import dev.execache.benchmarks.support.Samples;
import dev.execache.benchmarks.support.Scratch;
import dev.execache.benchmarks.support.Table;
import dev.execache.sandbox.DenoSandboxSettings;
import dev.execache.sandbox.SandboxProbe;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Every figure of issue #29 beside its baseline, measured in one run, printed as one table:
 * figure, execache, baseline, ratio, aim, met. Parts (arguments choose some; none means all):
 * {@code stdio} (an {@code execute_code} hit through {@code serve} against the pipe's floor and
 * the TypeScript SDK's trivial tool, each driven by the same bare line client), {@code gateway}
 * (a gateway hit against calling the server directly) with {@code bridge} (a cached tool call
 * from code), {@code cli} (hits through the resident server), {@code stores} (memory and SQLite
 * hits) and {@code sandbox} (a cold run against bare {@code deno run}). Servers compared call by
 * call share one CPU with the client ({@code -Dexecache.oneCpu=false} spreads them), so that a
 * round trip measures the server rather than where the kernel woke it.
 *
 * <p>Needs node with the test peers that app-cli's test build installs in
 * {@code app-cli/target/node} (or {@code -Dexecache.node=DIR}), Deno (installed on first use),
 * and {@code app-cli/target/execache.jar} (or {@code -Dexecache.jar=}).
 *
 * <pre>
 * ./mvnw -B -q -DskipTests package -pl benchmarks -am &amp;&amp; \
 *     java -cp benchmarks/target/benchmarks.jar dev.execache.benchmarks.SpeedReport
 * </pre>
 */
public final class SpeedReport {
    private static final List<String> PARTS = List.of("stdio", "gateway", "cli", "stores", "sandbox");
    /** Enough calls for C2 to compile serve's hot path (about 10,000 invocations), as in a long session. */
    private static final int LINE_WARM_UP = 5_000;
    private static final int LINE_ROUNDS = 2_000;
    private static final int BRIDGE_CALLS = 1_000;
    private static final int BRIDGE_ROUNDS = 21;
    private static final int CLI_ROUNDS = 21;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String HIT_CODE = "{\"code\":\"return 1 + 1\"}";

    /** The canned answerer's round trip, once the stdio part measured it: the bridge's floor too. */
    private static double pipeFloorMicros = Double.NaN;

    private SpeedReport() {
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        // JMH's lock is machine-wide: another checkout's benchmark must not stop this one
        System.setProperty("jmh.ignoreLock", "true");
        Set<String> parts = Reports.parts("SpeedReport", PARTS, args);
        Progress progress = new Progress();
        String loadAtStart = Machine.loadAverage();
        DenoSandboxSettings settings = DenoSandboxSettings.builder().warmPoolSize(2).build();
        SandboxProbe probe = SandboxProbe.prepare(settings);
        String machine = Machine.describe(probe.denoVersion());
        progress.note(machine + "; load average " + loadAtStart);
        Path jar = Artifacts.execacheJar();
        Path node = Artifacts.nodeDirectory();
        Table table = new Table("figure", "execache", "baseline (same run)", "ratio", "aim", "met?");
        Path scratch = Files.createTempDirectory("execache-speed-");
        try {
            if (parts.contains("stdio")) {
                progress.note("stdio: " + LINE_ROUNDS + " calls of each, in turns, after " + LINE_WARM_UP);
                stdio(table, jar, node, scratch);
            }
            if (parts.contains("gateway")) {
                progress.note("gateway: " + LINE_ROUNDS + " calls of each; bridge: " + BRIDGE_ROUNDS + " runs of "
                        + BRIDGE_CALLS + " calls");
                gateway(table, jar, node, scratch);
            }
            if (parts.contains("cli")) {
                progress.note("cli: " + CLI_ROUNDS + " rounds through a resident server of the report's own");
                cli(table, jar, node.resolve("lab-server.mjs"), progress);
            }
            if (parts.contains("stores")) {
                progress.note("stores: memory with JMH, SQLite against raw JDBC");
                stores(table, scratch);
            }
            if (parts.contains("sandbox")) {
                progress.note("sandbox: cold start and bare deno run, " + SandboxFigures.RUNS + " of each");
                double[] sandbox = SandboxFigures.measure(new Table(), probe, settings);
                table.add("cold run of `return 1 + 1` (median of " + SandboxFigures.RUNS + ")", Table.millis(sandbox[0]),
                        "bare `deno run` " + Table.millis(sandbox[1]), Table.times(sandbox[0], sandbox[1]), "≤ 1.3x",
                        met(sandbox[0] / sandbox[1] <= 1.3));
            }
        } finally {
            Scratch.deleteTree(scratch);
        }
        progress.note("done");
        Reports.print(machine, loadAtStart, "", table);
        System.out.println();
        System.out.printf(Locale.ROOT, "The report took %.0f s.%n", progress.elapsedSeconds());
        System.exit(0);
    }

    /**
     * The bare line client against three stdio servers, call by call in turns: the canned
     * answerer (the pipe's floor), the TypeScript SDK's {@code McpServer} with a trivial tool,
     * and {@code execache serve --store memory} answering an {@code execute_code} hit and
     * {@code cache_stats}.
     */
    private static void stdio(Table table, Path jar, Path node, Path scratch) throws IOException {
        long[][] nanos = new long[4][LINE_ROUNDS];
        Optional<String> allCpus = pinForTurns();
        try (RawLineClient canned = RawLineClient.of("node", List.of(node.resolve("canned-stdio.mjs").toString()));
                RawLineClient sdk = RawLineClient.of("node", List.of(node.resolve("ts-stdio-server.mjs").toString()));
                RawLineClient serve = new RawLineClient(Serve.command(jar, scratch.resolve("plain"), null))) {
            for (int i = 0; i < LINE_WARM_UP + LINE_ROUNDS; i++) {
                long[] took = {
                    canned.call("trivial", "{}"),
                    sdk.call("trivial", "{}"),
                    serve.call("execute_code", HIT_CODE),
                    serve.call("cache_stats", "{}"),
                };
                if (i >= LINE_WARM_UP) {
                    for (int k = 0; k < took.length; k++) {
                        nanos[k][i - LINE_WARM_UP] = took[k];
                    }
                }
            }
        } finally {
            allCpus.ifPresent(Machine::unpin);
        }
        double floor = Samples.medianMicros(nanos[0]);
        pipeFloorMicros = floor;
        double sdk = Samples.medianMicros(nanos[1]);
        double hit = Samples.medianMicros(nanos[2]);
        double stats = Samples.medianMicros(nanos[3]);
        String rounds = " (median of " + LINE_ROUNDS + ")";
        table.add("`execute_code` hit through `serve --store memory`, stdio" + rounds, Table.micros(hit),
                "the pipe's floor (canned answerer) " + Table.micros(floor), Table.times(hit, floor), "≤ 2x",
                met(hit / floor <= 2));
        table.add("`execute_code` hit through `serve --store memory`, stdio", Table.micros(hit),
                "TypeScript SDK `McpServer`, trivial tool " + Table.micros(sdk), Table.times(hit, sdk), "≤ 1x",
                met(hit <= sdk));
        table.add("`cache_stats` through `serve --store memory`, stdio", Table.micros(stats),
                "the pipe's floor (canned answerer) " + Table.micros(floor), Table.times(stats, floor), "", "");
        table.note("stdio: one bare JSON-RPC line client per server (write a line, read lines to the answer with its"
                + " id); the canned answerer is a node process that answers every line with the same result; the"
                + " calls take turns; " + LINE_WARM_UP + " warm-up rounds; " + placement(allCpus));
    }

    /**
     * Servers compared call by call share one CPU with the client (unless
     * {@code -Dexecache.oneCpu=false}): see {@link #placement}.
     */
    private static Optional<String> pinForTurns() {
        return Boolean.parseBoolean(System.getProperty("execache.oneCpu", "true")) ? Machine.pinToOneCpu()
                : Optional.empty();
    }

    private static String placement(Optional<String> allCpus) {
        return allCpus.isPresent()
                ? "the client and the servers it compares ran on one CPU, serve's compiler and collector threads too"
                        + " (`taskset`; `-Dexecache.oneCpu=false` lets them spread). Where an idle CPU sleeps (a"
                        + " virtual CPU that halts), a round trip that wakes it costs tens of µs more, and which"
                        + " server's wake-ups land on it changes from run to run (README, \"Against the floors\"); on"
                        + " one CPU each round trip is the server's own work plus the same two switches between"
                        + " processes."
                : "the client and the servers ran on every CPU the report may use (`-Dexecache.oneCpu=false`, or no"
                        + " `taskset`): a round trip that wakes a sleeping CPU costs more, and where wake-ups land"
                        + " changes from run to run.";
    }

    /**
     * A hit of a gateway tool through serve against the same tool called directly, with the same
     * bare line client, call by call; then, on the same serve, runs of code that call a cached
     * tool {@value #BRIDGE_CALLS} times against runs that call nothing (each run new code, so a
     * miss of the execution cache run on the warm pool).
     */
    private static void gateway(Table table, Path jar, Path node, Path scratch) throws IOException {
        Path lab = node.resolve("lab-server.mjs");
        long[] direct = new long[LINE_ROUNDS];
        long[] proxied = new long[LINE_ROUNDS];
        double[] bridge = new double[BRIDGE_ROUNDS];
        Optional<String> allCpus = pinForTurns();
        try (RawLineClient server = RawLineClient.of("node", List.of(lab.toString()));
                RawLineClient serve = new RawLineClient(Serve.command(jar, scratch.resolve("gateway"), lab))) {
            for (int i = 0; i < LINE_WARM_UP + LINE_ROUNDS; i++) {
                long straight = server.call("get_count", "{\"who\":\"bench\"}");
                long hit = serve.call("lab__get_count", "{\"who\":\"bench\"}");
                if (i >= LINE_WARM_UP) {
                    direct[i - LINE_WARM_UP] = straight;
                    proxied[i - LINE_WARM_UP] = hit;
                }
            }
            String last = serve.answer("lab__get_count", "{\"who\":\"bench\"}");
            if (!last.contains("\"status\":\"hit\"")) {
                throw new IllegalStateException("the gateway's call was not a hit of the cache: " + last);
            }
            // the bridge's figure stands alone: Deno and serve on every CPU, as they run
            allCpus.ifPresent(Machine::unpin);
            for (int i = -3; i < BRIDGE_ROUNDS; i++) {
                // timed inside the run, so that the run's own start and end stay out of the figure
                String answer = serve.answer("execute_code", code("// round " + i + "\nconst start = performance.now();\n"
                        + "for (let k = 0; k < " + BRIDGE_CALLS + "; k++) await tools.lab.get_other({});\n"
                        + "return (performance.now() - start) * 1000 / " + BRIDGE_CALLS + ";"));
                if (i >= 0) {
                    bridge[i] = JSON.readTree(answer).at("/result/structuredContent/result").asDouble();
                }
            }
        } finally {
            allCpus.ifPresent(Machine::unpin);
        }
        double directMicros = Samples.medianMicros(direct);
        double hitMicros = Samples.medianMicros(proxied);
        table.add("gateway hit through `serve`, stdio (median of " + LINE_ROUNDS + ")", Table.micros(hitMicros),
                "the same server called directly " + Table.micros(directMicros), Table.times(hitMicros, directMicros),
                "≤ 1x", met(hitMicros <= directMicros));
        double perCall = Samples.median(bridge);
        table.add("bridge call from code to a cached tool (median of " + BRIDGE_ROUNDS + " runs of " + BRIDGE_CALLS
                + " calls)", Table.micros(perCall), Double.isNaN(pipeFloorMicros)
                        ? "the agent's gateway hit " + Table.micros(hitMicros)
                        : "the pipe's floor (canned answerer) " + Table.micros(pipeFloorMicros),
                Table.times(perCall, Double.isNaN(pipeFloorMicros) ? hitMicros : pipeFloorMicros), "< 50 µs",
                met(perCall < 50));
        table.note("Gateway: the lab server (TypeScript SDK) called directly and through serve with the same bare line"
                + " client, in turns, placed as stdio's. Bridge: on every CPU, runs of code making " + BRIDGE_CALLS
                + " calls of a cached read-only tool, timed by the code itself (`performance.now()` around the calls, over " + BRIDGE_CALLS + ");"
                + " each run is new code, run on the warm pool. A bridge call is one round trip over a pipe (Deno to"
                + " serve and back), so its floor is the canned answerer's.");
    }

    private static void cli(Table table, Path jar, Path lab, Progress progress) throws IOException, InterruptedException {
        CliFigures.Resident resident = CliFigures.resident(jar, lab, CLI_ROUNDS, progress);
        table.add("CLI hit through the resident server, `servers:` lists one server (median of " + CLI_ROUNDS + ")",
                Table.millis(resident.hitWithServers()), "the same hit without `servers:` " + Table.millis(resident.hit()),
                Table.times(resident.hitWithServers(), resident.hit()), "≤ 1.2x",
                met(resident.hitWithServers() / resident.hit() <= 1.2));
        table.add("CLI hit through the resident server", Table.millis(resident.hit()),
                "`java -version` " + Table.millis(resident.javaVersion()),
                Table.times(resident.hit(), resident.javaVersion()), "≤ 2x",
                met(resident.hit() / resident.javaVersion() <= 2));
        table.note("CLI: wall time of the thin client (`execache-client.jar`) run as the launcher runs it (C1 only, its"
                + " class-data archive) with `run hello.ts --store sqlite`, in a directory without `execache.yaml` and in"
                + " one listing the lab server under `servers:`; the three commands rotate round by round.");
    }

    private static void stores(Table table, Path scratch) throws Exception {
        Map<String, Double> nanos = HitPathFigures.memory(new Table(), scratch.resolve("jmh.log"));
        double get = nanos.get("memoryStoreGet");
        table.add("memory store hit, `get(key)` (JMH mean)", Table.micros(get / 1000),
                "Caffeine `getIfPresent` " + Table.micros(nanos.get("caffeineGetIfPresent") / 1000)
                        + ", `ConcurrentHashMap.get` " + Table.micros(nanos.get("concurrentHashMapGet") / 1000),
                Table.times(get, nanos.get("caffeineGetIfPresent")), "< 100 ns", met(get < 100));
        double[] sqlite = HitPathFigures.sqlite(new Table());
        table.add("SQLite store hit, `get(key)` (median)", Table.micros(sqlite[0]),
                "raw JDBC primary-key select " + Table.micros(sqlite[1]), Table.times(sqlite[0], sqlite[1]), "≤ 1.3x",
                met(sqlite[0] / sqlite[1] <= 1.3));
        table.add("SQLite store hit, `get(key)` (median)", Table.micros(sqlite[0]),
                "the raw select kept prepared " + Table.micros(sqlite[2]), Table.times(sqlite[0], sqlite[2]), "", "");
        table.note("Stores: the memory store with JMH (one fork, 3 warm-up and 5 measured iterations of 0.5 s, the"
                + " mean); SQLite: one file, 100 entries, store get, a raw select prepared per call and the same select"
                + " kept prepared (as the store keeps its own) alternating call by call.");
    }

    private static String met(boolean met) {
        return met ? "met" : "**not met**";
    }

    private static String code(String code) {
        try {
            return JSON.writeValueAsString(Map.of("code", code));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
