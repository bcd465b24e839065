package dev.execache.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * {@code java -jar execache.jar run hello.ts --store sqlite} on a cache hit, beside a bare JVM
 * start ({@code java -version}), and the same hit with JVM options that cut start-up: C1 only
 * ({@code -XX:TieredStopAtLevel=1}) and an application class-data archive (AppCDS, made by
 * one training run with {@code -XX:ArchiveClassesAtExit}). All take turns, round by round.
 */
final class CliFigures {
    static final int ROUNDS = 11;
    private static final String HELLO = """
            const name: string = context.name ?? "world";
            console.log(`greeting ${name}`);
            return { greeting: `Hello, ${name}!`, length: name.length };
            """;

    private CliFigures() {
    }

    /** A hit must stay a hit however slowly the rounds go, hence a TTL longer than the default 5 minutes. */
    static void measure(Table table, Path jar, Progress progress) throws IOException, InterruptedException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Path directory = Files.createTempDirectory("execache-bench-cli");
        try {
            Path script = directory.resolve("hello.ts");
            Files.writeString(script, HELLO);
            Path archive = directory.resolve("execache.jsa");
            List<String> run = List.of("-jar", jar.toString(), "run", script.toString(),
                    "--store", "sqlite", "--db", directory.resolve("cache.db").toString(), "--ttl", "1h");

            expect(command(directory, java, List.of(), run), "cache miss");
            expect(command(directory, java, List.of("-XX:ArchiveClassesAtExit=" + archive), run), "cache hit");
            if (!Files.isRegularFile(archive)) {
                throw new IllegalStateException("the training run wrote no class-data archive at " + archive);
            }
            Map<String, ProcessBuilder> variants = new LinkedHashMap<>();
            variants.put("java -version", command(directory, java, List.of("-version"), List.of()));
            variants.put("hit", command(directory, java, List.of(), run));
            variants.put("hit, C1 only", command(directory, java, List.of("-XX:TieredStopAtLevel=1"), run));
            variants.put("hit, AppCDS", command(directory, java, List.of("-XX:SharedArchiveFile=" + archive), run));
            variants.put("hit, AppCDS + C1 only", command(directory, java,
                    List.of("-XX:SharedArchiveFile=" + archive, "-XX:TieredStopAtLevel=1"), run));
            List<String> names = new ArrayList<>(variants.keySet());
            Map<String, List<Double>> millis = new LinkedHashMap<>();
            names.forEach(name -> millis.put(name, new ArrayList<>()));
            for (int round = 0; round < ROUNDS; round++) {
                for (int turn = 0; turn < names.size(); turn++) {
                    String name = names.get((round + turn) % names.size());
                    millis.get(name).add(name.equals("java -version")
                            ? timed(variants.get(name), "version")
                            : timed(variants.get(name), "cache hit"));
                }
                progress.note("cli: round " + (round + 1) + " of " + ROUNDS);
            }
            table.note("CLI: wall time of the whole process, " + ROUNDS + " rounds, each command once per round in"
                    + " rotating order; the AppCDS archive (" + Files.size(archive) / (1024 * 1024) + " MiB) comes from one"
                    + " training run of the same hit with -XX:ArchiveClassesAtExit.");
            double bare = Samples.median(millis.get("java -version"));
            double hit = Samples.median(millis.get("hit"));
            table.add("CLI hit, `java -jar execache.jar run hello.ts --store sqlite --db F` (median of " + ROUNDS + ")",
                    Table.millis(hit), "`java -version` " + Table.millis(bare), Table.times(hit, bare),
                    Table.aim("≤ 4x", hit / bare <= 4));
            for (String name : names.subList(2, names.size())) {
                double variant = Samples.median(millis.get(name));
                String flags = switch (name) {
                    case "hit, C1 only" -> "`-XX:TieredStopAtLevel=1`";
                    case "hit, AppCDS" -> "AppCDS (`-XX:SharedArchiveFile`)";
                    default -> "AppCDS + `-XX:TieredStopAtLevel=1`";
                };
                table.add("CLI hit with " + flags, Table.millis(variant), "`java -version` " + Table.millis(bare),
                        Table.times(variant, bare), Table.aim("≤ 4x", variant / bare <= 4));
            }
        } finally {
            try (Stream<Path> files = Files.list(directory)) {
                for (Path file : files.toList()) {
                    Files.delete(file);
                }
            }
            Files.delete(directory);
        }
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
