package dev.execache.benchmarks.process;

import dev.execache.benchmarks.support.Artifacts;
import dev.execache.benchmarks.support.Machine;
import dev.execache.benchmarks.support.Samples;
import dev.execache.benchmarks.support.Scratch;
import dev.execache.benchmarks.support.Table;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The CPU a stdio server spends per call, beside its round trip: {@code execute_code} hits and
 * gateway hits through the {@code serve} of each jar given (to compare two builds), and with
 * {@code --nodes} the canned answerer, the TypeScript SDK's trivial tool and the lab server, all
 * driven by the same bare line client in turns. Round trips on a machine whose idle CPUs sleep
 * move with where the kernel wakes each process; CPU time does not, so a change to serve's hot
 * path is judged by it. Linux only (it reads {@code /proc}).
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar dev.execache.benchmarks.process.ServeCpu [--nodes] [--warm=N] [--calls=N] [A.jar,B.jar]
 * </pre>
 */
public final class ServeCpu {
    /** serve's threads that read and answer stdin: the one that reads, and any that took reading on. */
    private static final String READER_THREADS = "execache-mcp-st";
    private static final double NANOS_PER_TICK = 10_000_000;

    private ServeCpu() {
    }

    public static void main(String[] args) throws Exception {
        int warm = 30_000;
        int calls = 20_000;
        boolean nodes = false;
        List<Path> jars = new ArrayList<>();
        for (String arg : args) {
            if (arg.startsWith("--warm=")) {
                warm = Integer.parseInt(arg.substring("--warm=".length()));
            } else if (arg.startsWith("--calls=")) {
                calls = Integer.parseInt(arg.substring("--calls=".length()));
            } else if (arg.equals("--nodes")) {
                nodes = true;
            } else if (arg.startsWith("--")) {
                System.err.println("usage: ServeCpu [--nodes] [--warm=N] [--calls=N] [JAR,JAR...]");
                System.exit(2);
            } else {
                for (String jar : arg.split(",")) {
                    jars.add(Path.of(jar));
                }
            }
        }
        if (jars.isEmpty()) {
            jars.add(Artifacts.execacheJar());
        }
        Path node = Artifacts.nodeDirectory();
        Path lab = node.resolve("lab-server.mjs");
        Path scratch = Files.createTempDirectory("execache-serve-cpu-");
        List<Server> servers = new ArrayList<>();
        try {
            if (nodes) {
                servers.add(new Server("canned answerer", RawLineClient.of("node", List.of(node.resolve("canned-stdio.mjs")
                        .toString())), "trivial", "{}", false, calls));
                servers.add(new Server("TypeScript SDK trivial tool", RawLineClient.of("node",
                        List.of(node.resolve("ts-stdio-server.mjs").toString())), "trivial", "{}", false, calls));
                servers.add(new Server("lab server directly", RawLineClient.of("node", List.of(lab.toString())),
                        "get_count", "{\"who\":\"bench\"}", false, calls));
            }
            for (int i = 0; i < jars.size(); i++) {
                Path jar = jars.get(i);
                String name = jar.getFileName().toString();
                servers.add(new Server(name + ": execute_code hit", new RawLineClient(Serve.command(jar,
                        scratch.resolve("plain-" + i), null)), "execute_code", "{\"code\":\"return 1 + 1\"}", true, calls));
                servers.add(new Server(name + ": gateway hit", new RawLineClient(Serve.command(jar,
                        scratch.resolve("gateway-" + i), lab)), "lab__get_count", "{\"who\":\"bench\"}", true, calls));
            }
            for (int round = 0; round < warm + calls; round++) {
                for (Server server : servers) {
                    if (round == warm) {
                        server.start();
                    }
                    long took = server.client.call(server.tool, server.arguments);
                    if (round >= warm) {
                        server.nanos[round - warm] = took;
                    }
                }
            }
            Table table = new Table("server, call", "round trip (median)", "CPU per call, whole process",
                    "reading thread: user", "reading thread: system");
            for (Server server : servers) {
                Cpu end = Cpu.of(server.client.pid(), server.serve);
                table.add(server.name, Table.micros(Samples.medianMicros(server.nanos)),
                        micros((end.all - server.begin.all) / (double) calls),
                        server.serve ? micros((end.user - server.begin.user) * NANOS_PER_TICK / calls) : "",
                        server.serve ? micros((end.system - server.begin.system) * NANOS_PER_TICK / calls) : "");
            }
            table.note(calls + " calls of each, in turns, after " + warm + "; load average " + Machine.loadAverage()
                    + " at the end. CPU from /proc: the whole process's threads (schedstat), and serve's reading"
                    + " thread's user and system time (stat, in ticks of 10 ms: run enough calls).");
            System.out.print(table.markdown());
        } finally {
            servers.forEach(server -> server.client.close());
            Scratch.deleteTree(scratch);
        }
    }

    private static String micros(double nanos) {
        return String.format(Locale.ROOT, "%.2f µs", nanos / 1000);
    }

    private static final class Server {
        final String name;
        final RawLineClient client;
        final String tool;
        final String arguments;
        final boolean serve;
        final long[] nanos;
        Cpu begin;

        Server(String name, RawLineClient client, String tool, String arguments, boolean serve, int calls) {
            this.name = name;
            this.client = client;
            this.tool = tool;
            this.arguments = arguments;
            this.serve = serve;
            this.nanos = new long[calls];
        }

        void start() throws IOException {
            begin = Cpu.of(client.pid(), serve);
        }
    }

    /** A process's CPU so far: all its threads in ns, and its reading threads' user and system ticks. */
    private record Cpu(long all, long user, long system) {
        static Cpu of(long pid, boolean serve) throws IOException {
            long all = 0;
            long user = 0;
            long system = 0;
            try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc", Long.toString(pid), "task"))) {
                for (Path task : tasks) {
                    try {
                        all += Long.parseLong(Files.readString(task.resolve("schedstat")).split(" ")[0]);
                        if (serve && Files.readString(task.resolve("comm")).startsWith(READER_THREADS)) {
                            String stat = Files.readString(task.resolve("stat"));
                            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                            user += Long.parseLong(fields[11]);
                            system += Long.parseLong(fields[12]);
                        }
                    } catch (IOException e) {
                        // the thread ended meanwhile
                    }
                }
            }
            return new Cpu(all, user, system);
        }
    }
}
