package dev.execache.benchmarks.process;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.execache.benchmarks.support.Artifacts;
import dev.execache.benchmarks.support.Machine;
import dev.execache.benchmarks.support.Samples;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * An editing agent behind {@code execache serve} on its default store (SQLite), in front of
 * {@code @modelcontextprotocol/server-filesystem}: a loop over a few files of reading one (a tool call, and
 * code that reads it through {@code tools.fs.read_text_file}), changing it on disk every other round as an
 * editor would, and reading it again. Every answer is compared with the file on disk: an answer that differs
 * is a stale answer served. Run on an idle machine, then with a busy loop per core; the default configuration
 * (the local server's reads asked every time), then a rule that caches its reads for five minutes, as a
 * timing judged "slow" on a busy machine used to. It prints the stale answers served and the time saved on
 * the reads that did not change.
 *
 * <p>{@code java -cp benchmarks.jar dev.execache.benchmarks.process.EditingAgentFigures [ROUNDS]}
 */
public final class EditingAgentFigures {
    private static final int FILES = 5;
    private static final ObjectMapper JSON = new ObjectMapper();

    private EditingAgentFigures() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 40;
        Path jar = Artifacts.execacheJar();
        Path filesystem = Artifacts.nodeDirectory().resolve("node_modules/.bin/mcp-server-filesystem");
        System.out.println("An editing agent: " + rounds + " rounds over " + FILES + " files of read, change on disk"
                + " every other round, read again; each read as a tool call and as code; serve on SQLite.");
        for (boolean busy : List.of(false, true)) {
            List<Process> hogs = busy ? hogs() : List.of();
            try {
                for (String setup : List.of("default", "rule")) {
                    Figures figures = run(jar, filesystem, setup, rounds);
                    figures.print((busy ? "a busy loop per core" : "idle") + ", " + (setup.equals("default")
                            ? "default (local reads asked every time)" : "rule fs__read_text_file ttl 300 s"));
                }
            } finally {
                hogs.forEach(Process::destroyForcibly);
            }
        }
    }

    private static List<Process> hogs() throws IOException {
        List<Process> hogs = new ArrayList<>();
        for (int i = 0; i < Runtime.getRuntime().availableProcessors(); i++) {
            hogs.add(new ProcessBuilder("sh", "-c", "while :; do :; done").start());
        }
        return hogs;
    }

    private static Figures run(Path jar, Path filesystem, String setup, int rounds) throws Exception {
        Path dir = Files.createTempDirectory("execache-editing-agent");
        Path files = Files.createDirectories(dir.resolve("files")).toRealPath();
        for (int i = 0; i < FILES; i++) {
            Files.writeString(files.resolve("file" + i + ".txt"), "file " + i + "\n" + "line\n".repeat(50));
        }
        Path config = Files.writeString(dir.resolve("execache.yaml"), "servers:\n  fs:\n    command: \"" + filesystem
                + "\"\n    args: [\"" + files + "\"]\n" + (setup.equals("rule")
                        ? "tool_calls:\n  rules:\n    - {tool: fs__read_text_file, ttl_seconds: 300}\n" : ""));
        List<String> command = List.of(Artifacts.java(), "-jar", jar.toString(), "serve", "--config", config.toString());
        StdioClientTransport transport = new StdioClientTransport(ServerParameters.builder(command.get(0))
                .args(command.subList(1, command.size()))
                .env(Map.of("XDG_CACHE_HOME", dir.resolve("cache").toString(), "EXECACHE_WARM_POOL", "0")).build(),
                new JacksonMcpJsonMapper(new ObjectMapper()));
        transport.setStdErrorHandler(line -> { });
        Figures figures = new Figures(Machine.loadAverage());
        try (McpSyncClient serve = McpClient.sync(transport).requestTimeout(Duration.ofMinutes(2))
                .initializationTimeout(Duration.ofMinutes(2))
                .clientInfo(new McpSchema.Implementation("execache-bench", "1")).build()) {
            serve.initialize();
            while (serve.listTools().tools().stream().noneMatch(tool -> tool.name().equals("fs__read_text_file"))) {
                Thread.sleep(100);
            }
            for (int round = 0; round < rounds; round++) {
                Path file = files.resolve("file" + round % FILES + ".txt");
                boolean edits = round % 2 == 1;
                read(serve, file, figures, false);
                if (edits) {
                    Files.writeString(file, Files.readString(file) + "edited in round " + round + "\n");
                }
                read(serve, file, figures, edits);
            }
        }
        return figures;
    }

    /** Reads {@code file} by a tool call and by code, counting what came back against the file on disk. */
    private static void read(McpSyncClient serve, Path file, Figures figures, boolean changed) throws IOException {
        long start = System.nanoTime();
        McpSchema.CallToolResult call = serve.callTool(new McpSchema.CallToolRequest("fs__read_text_file",
                Map.of("path", file.toString())));
        long callNanos = System.nanoTime() - start;
        String onDisk = Files.readString(file);
        String answered = ((McpSchema.TextContent) call.content().get(0)).text();
        figures.count("tool call", status(call.meta()), answered.equals(onDisk), callNanos, 0, changed);

        String code = "const r = await tools.fs.read_text_file({path: " + JSON.writeValueAsString(file.toString())
                + "}); return typeof r === 'string' ? r : r.content;";
        start = System.nanoTime();
        McpSchema.CallToolResult run = serve.callTool(new McpSchema.CallToolRequest("execute_code", Map.of("code", code)));
        long runNanos = System.nanoTime() - start;
        if (Boolean.TRUE.equals(run.isError())) {
            throw new IllegalStateException("execute_code failed: " + run.content());
        }
        Map<?, ?> result = (Map<?, ?>) run.structuredContent();
        Object saved = result.get("savedMs");
        figures.count("code", String.valueOf(result.get("cache")), onDisk.equals(result.get("result")), runNanos,
                saved instanceof Number number ? number.doubleValue() : 0, changed);
    }

    private static String status(Map<String, Object> meta) {
        return meta != null && meta.get("dev.execache/cache") instanceof Map<?, ?> cache
                ? String.valueOf(cache.get("status")) : "none";
    }

    /** What one setup served: per kind of read, answers by status, stale answers, times and time saved. */
    private static final class Figures {
        private final String loadBefore;
        private final Map<String, Map<String, Integer>> statuses = new TreeMap<>();
        private final Map<String, Integer> stale = new TreeMap<>();
        private final Map<String, List<Double>> unchangedMillis = new TreeMap<>();
        private final Map<String, List<Double>> changedMillis = new TreeMap<>();
        private final Map<String, Double> savedMillis = new TreeMap<>();

        Figures(String loadBefore) {
            this.loadBefore = loadBefore;
        }

        void count(String kind, String status, boolean fresh, long nanos, double savedMs, boolean changed) {
            statuses.computeIfAbsent(kind, k -> new TreeMap<>()).merge(status, 1, Integer::sum);
            stale.merge(kind, fresh ? 0 : 1, Integer::sum);
            (changed ? changedMillis : unchangedMillis).computeIfAbsent(kind, k -> new ArrayList<>()).add(nanos / 1e6);
            if (!changed) {
                savedMillis.merge(kind, savedMs, Double::sum);
            }
        }

        void print(String setup) {
            System.out.printf(Locale.ROOT, "%n%s (load average before: %s, after: %s)%n", setup, loadBefore,
                    Machine.loadAverage());
            for (String kind : statuses.keySet()) {
                System.out.printf(Locale.ROOT, "  %-9s stale answers served %3d; statuses %s; median ms, unchanged file"
                        + " %7.1f, just changed %7.1f; saved on unchanged reads (execache's savedMs) %8.1f ms%n", kind,
                        stale.get(kind), statuses.get(kind), Samples.median(unchangedMillis.getOrDefault(kind, List.of())),
                        Samples.median(changedMillis.getOrDefault(kind, List.of())), savedMillis.getOrDefault(kind, 0.0));
            }
        }
    }
}
