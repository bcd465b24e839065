package dev.execache.benchmarks.process;

import dev.execache.benchmarks.support.Artifacts;
import dev.execache.benchmarks.support.Progress;
import dev.execache.benchmarks.support.Samples;
import dev.execache.benchmarks.support.Scratch;
import dev.execache.benchmarks.support.Table;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * {@code java -jar execache.jar run hello.ts --store sqlite} on a cache hit, beside a bare JVM
 * start ({@code java -version}): in-process, also with JVM options that cut start-up: C1 only
 * ({@code -XX:TieredStopAtLevel=1}) and an application class-data archive (AppCDS, made by
 * one training run with {@code -XX:ArchiveClassesAtExit}); and through the resident server, a
 * hit and a warm miss of {@code return 1 + 1}. All take turns, round by round.
 */
public final class CliFigures {
    public static final int ROUNDS = 11;
    private static final String HELLO = """
            const name: string = context.name ?? "world";
            console.log(`greeting ${name}`);
            return { greeting: `Hello, ${name}!`, length: name.length };
            """;

    private CliFigures() {
    }

    /** A hit must stay a hit however slowly the rounds go, hence a TTL longer than the default 5 minutes. */
    public static void measure(Table table, Path jar, Progress progress) throws IOException, InterruptedException {
        String java = Artifacts.java();
        Path directory = Files.createTempDirectory("execache-bench-cli");
        Path runtime = Files.createDirectory(directory.resolve("run"),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        try {
            Path script = directory.resolve("hello.ts");
            Files.writeString(script, HELLO);
            Path one = directory.resolve("one.ts");
            Files.writeString(one, "return 1 + 1;\n");
            Path archive = directory.resolve("execache.jsa");
            Path clientArchive = directory.resolve("client.jsa");
            String db = directory.resolve("cache.db").toString();
            List<String> run = List.of("-jar", jar.toString(), "run", script.toString(),
                    "--store", "sqlite", "--db", db, "--ttl", "1h");
            List<String> c1 = List.of("-XX:TieredStopAtLevel=1");

            expect(inProcess(command(directory, java, List.of(), run)), "cache miss");
            expect(inProcess(command(directory, java, List.of("-XX:ArchiveClassesAtExit=" + archive), run)), "cache hit");
            if (!Files.isRegularFile(archive)) {
                throw new IllegalStateException("the training run wrote no class-data archive at " + archive);
            }
            expect(server(command(directory, java, List.of(), List.of("-jar", jar.toString(), "server", "start")),
                    runtime), "running");
            expect(server(command(directory, java, List.of("-XX:ArchiveClassesAtExit=" + clientArchive), run), runtime),
                    "cache hit");
            List<String> launcherFlags = List.of("-XX:SharedArchiveFile=" + clientArchive, "-XX:TieredStopAtLevel=1");
            Map<String, IntFunction<ProcessBuilder>> variants = new LinkedHashMap<>();
            variants.put("java -version", round -> command(directory, java, List.of("-version"), List.of()));
            variants.put("hit", round -> inProcess(command(directory, java, List.of(), run)));
            variants.put("hit, C1 only", round -> inProcess(command(directory, java, c1, run)));
            variants.put("hit, AppCDS", round -> inProcess(command(directory, java,
                    List.of("-XX:SharedArchiveFile=" + archive), run)));
            variants.put("hit, AppCDS + C1 only", round -> inProcess(command(directory, java,
                    List.of("-XX:SharedArchiveFile=" + archive, "-XX:TieredStopAtLevel=1"), run)));
            variants.put("miss in-process", round -> inProcess(command(directory, java,
                    List.of("-XX:SharedArchiveFile=" + archive, "-XX:TieredStopAtLevel=1"), missOf(jar, one, db, "p" + round))));
            variants.put("server hit", round -> server(command(directory, java, launcherFlags, run), runtime));
            variants.put("server hit, no flags", round -> server(command(directory, java, List.of(), run), runtime));
            variants.put("server miss", round -> server(command(directory, java, launcherFlags,
                    missOf(jar, one, db, "s" + round)), runtime));
            List<String> names = new ArrayList<>(variants.keySet());
            Map<String, List<Double>> millis = inTurns(variants, ROUNDS, 1, progress);
            table.note("CLI: wall time of the whole process, " + ROUNDS + " rounds, each command once per round in"
                    + " rotating order; the AppCDS archive (" + Files.size(archive) / (1024 * 1024) + " MiB) comes from one"
                    + " training run of the same hit with -XX:ArchiveClassesAtExit; in-process runs set"
                    + " EXECACHE_NO_DAEMON=1. Through the server: one resident server (started before the rounds, warm pool"
                    + " of 2) serves a thin client started with the launcher's flags (C1 only, and a class-data archive of"
                    + " the client's own " + Files.size(clientArchive) / 1024 + " KiB from one training hit); each miss"
                    + " has a context of its own, so it runs `return 1 + 1` on the warm pool.");
            double bare = Samples.median(millis.get("java -version"));
            besideJava(table, "CLI hit in-process, `java -jar execache.jar run hello.ts --store sqlite --db F` (median of "
                    + ROUNDS + ")", millis.get("hit"), bare, 4);
            for (String name : names.subList(2, 5)) {
                String flags = switch (name) {
                    case "hit, C1 only" -> "`-XX:TieredStopAtLevel=1`";
                    case "hit, AppCDS" -> "AppCDS (`-XX:SharedArchiveFile`)";
                    default -> "AppCDS + `-XX:TieredStopAtLevel=1`";
                };
                besideJava(table, "CLI hit in-process with " + flags, millis.get(name), bare, 4);
            }
            besideJava(table, "CLI hit through the resident server (thin client, the launcher's flags)",
                    millis.get("server hit"), bare, 2);
            besideJava(table, "CLI hit through the resident server, client without JVM flags",
                    millis.get("server hit, no flags"), bare, Double.NaN);
            besideJava(table, "CLI miss of `return 1 + 1` through the resident server (warm pool)",
                    millis.get("server miss"), bare, 3);
            besideJava(table, "CLI miss of `return 1 + 1` in-process (AppCDS + C1 only, cold Deno)",
                    millis.get("miss in-process"), bare, Double.NaN);
        } finally {
            stopServerAndDelete(directory, java, jar, runtime, progress);
        }
    }

    /** A row: the median of a command's times beside {@code java -version}'s, and its aim (at most {@code aim} times). */
    private static void besideJava(Table table, String figure, List<Double> millis, double bare, double aim) {
        double median = Samples.median(millis);
        table.add(figure, Table.millis(median), "`java -version` " + Table.millis(bare), Table.times(median, bare),
                Double.isNaN(aim) ? "" : Table.aim("≤ " + (int) aim + "x", median / bare <= aim));
    }

    /** Medians in ms of {@link #resident}: {@code java -version}, a hit, the same hit with a {@code servers:} section. */
    public record Resident(double javaVersion, double hit, double hitWithServers) {
    }

    /**
     * A hit through the resident server as the launcher runs it (the client jar, C1 only, the
     * client's class-data archive), in a directory without {@code execache.yaml} and in one whose
     * {@code execache.yaml} lists the lab server under {@code servers:}, beside {@code java -version};
     * the three take turns round by round. The server is the report's own (a private runtime
     * directory), started before the rounds and stopped after them.
     */
    public static Resident resident(Path jar, Path labServer, int rounds, Progress progress) throws IOException, InterruptedException {
        String java = Artifacts.java();
        Path client = jar.resolveSibling("execache-client.jar");
        Path directory = Files.createTempDirectory("execache-bench-resident");
        Path runtime = Files.createDirectory(directory.resolve("run"),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        try {
            Path plain = Files.createDirectory(directory.resolve("plain"));
            Path withServers = Files.createDirectory(directory.resolve("servers"));
            Files.writeString(withServers.resolve("execache.yaml"), Serve.labConfig(labServer));
            for (Path dir : List.of(plain, withServers)) {
                Files.writeString(dir.resolve("hello.ts"), HELLO);
            }
            String db = directory.resolve("cache.db").toString();
            List<String> run = List.of("-jar", client.toString(), "run", "hello.ts", "--store", "sqlite", "--db", db, "--ttl", "1h");
            Path archive = directory.resolve("client.jsa");
            List<String> flags = List.of("-Xlog:cds=off", "-Xlog:cds+dynamic=off", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData",
                    "-XX:SharedArchiveFile=" + archive);
            expect(server(command(directory, java, List.of(), List.of("-jar", jar.toString(), "server", "start")),
                    runtime), "running");
            expect(server(command(plain, java, List.of("-XX:TieredStopAtLevel=1", "-XX:ArchiveClassesAtExit=" + archive), run),
                    runtime), "cache");
            expect(server(command(withServers, java, flags, run), runtime), "cache");
            Map<String, IntFunction<ProcessBuilder>> variants = new LinkedHashMap<>();
            variants.put("java -version", round -> command(directory, java, List.of("-version"), List.of()));
            variants.put("hit", round -> server(command(plain, java, flags, run), runtime));
            variants.put("hit with servers", round -> server(command(withServers, java, flags, run), runtime));
            Map<String, List<Double>> millis = inTurns(variants, rounds, 10, progress);
            return new Resident(Samples.median(millis.get("java -version")), Samples.median(millis.get("hit")),
                    Samples.median(millis.get("hit with servers")));
        } finally {
            stopServerAndDelete(directory, java, jar, runtime, progress);
        }
    }

    /**
     * Runs each command once a round, in an order that rotates round by round, and returns the
     * wall times in ms by name. Each must say what its name says: {@code java -version} its
     * version, a miss {@code cache miss}, any other {@code cache hit}.
     */
    private static Map<String, List<Double>> inTurns(Map<String, IntFunction<ProcessBuilder>> commands, int rounds,
            int noteEvery, Progress progress) throws IOException, InterruptedException {
        List<String> names = new ArrayList<>(commands.keySet());
        Map<String, List<Double>> millis = new LinkedHashMap<>();
        names.forEach(name -> millis.put(name, new ArrayList<>()));
        for (int round = 0; round < rounds; round++) {
            for (int turn = 0; turn < names.size(); turn++) {
                String name = names.get((round + turn) % names.size());
                String expected = name.equals("java -version") ? "version" : name.contains("miss") ? "cache miss" : "cache hit";
                millis.get(name).add(timed(commands.get(name).apply(round), expected));
            }
            if ((round + 1) % noteEvery == 0) {
                progress.note("cli: round " + (round + 1) + " of " + rounds);
            }
        }
        return millis;
    }

    /** Stops the report's own resident server and deletes its directory. */
    private static void stopServerAndDelete(Path directory, String java, Path jar, Path runtime, Progress progress)
            throws IOException, InterruptedException {
        try {
            expect(server(command(directory, java, List.of(), List.of("-jar", jar.toString(), "server", "stop")),
                    runtime), "");
        } catch (IOException | IllegalStateException e) {
            progress.note("cli: the server did not stop: " + e.getMessage());
        }
        Scratch.deleteTree(directory);
    }

    private static List<String> missOf(Path jar, Path script, String db, String token) {
        return List.of("-jar", jar.toString(), "run", script.toString(), "--store", "sqlite", "--db", db, "--ttl", "1h",
                "--context", "{\"round\":\"" + token + "\"}");
    }

    private static ProcessBuilder inProcess(ProcessBuilder builder) {
        builder.environment().put("EXECACHE_NO_DAEMON", "1");
        return builder;
    }

    private static ProcessBuilder server(ProcessBuilder builder, Path runtime) {
        builder.environment().put("XDG_RUNTIME_DIR", runtime.toString());
        return builder;
    }

    private static ProcessBuilder command(Path directory, String java, List<String> jvmOptions, List<String> arguments) {
        List<String> command = new ArrayList<>();
        command.add(java);
        command.addAll(jvmOptions);
        command.addAll(arguments);
        ProcessBuilder builder = new ProcessBuilder(command).directory(directory.toFile()).redirectErrorStream(true);
        builder.environment().keySet().removeIf(name -> name.startsWith("EXECACHE_") || name.startsWith("JAVA_TOOL")
                || name.equals("JDK_JAVA_OPTIONS") || name.equals("_JAVA_OPTIONS"));
        return builder;
    }

    private static double timed(ProcessBuilder builder, String expected) throws IOException, InterruptedException {
        long start = System.nanoTime();
        expect(builder, expected);
        return Samples.millisSince(start);
    }

    /** Runs to the end; fails unless it exits 0 and its output says {@code expected}. */
    private static void expect(ProcessBuilder builder, String expected) throws IOException, InterruptedException {
        Process process = builder.start();
        process.getOutputStream().close();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        int exit = process.waitFor();
        if (exit != 0 || !output.contains(expected)) {
            throw new IllegalStateException(String.join(" ", builder.command()) + " exited " + exit
                    + " without saying '" + expected + "':\n" + output);
        }
    }
}
