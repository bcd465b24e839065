package dev.execache.benchmarks.process;

import dev.execache.benchmarks.support.Artifacts;
import dev.execache.benchmarks.support.Machine;
import dev.execache.benchmarks.support.Samples;
import dev.execache.benchmarks.support.Scratch;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * How long {@code execache serve} takes to answer {@code initialize}, from the start of its process, as an agent host
 * starts it (its launcher, a fresh home, the default warm pool), beside a Node MCP server's start
 * ({@code server-memory}): from the release archive, from the npm package, without the warm pool of Deno runners,
 * started as {@code java -jar} without the launcher's flags (its class-data archive, made at serve's first end, and
 * its quick compiler alone), and
 * with {@code server-memory} behind serve. Each takes its turn, round by
 * round, in rotating order. Then, the same way, two things a person meets after {@code setup} moved a server behind
 * execache, each beside that server alone: a one-shot client (initialize, {@code tools/list}, end of input) until it
 * has the list with the server's tools, and {@code execache run examples/hello.ts --no-cache} with that server
 * configured beside a run with none. Then a person's first start: serve in a fresh home, before the launcher has
 * written its class-data archive. Last, as after {@code setup} moved several servers: three reference servers
 * ({@code server-memory}, {@code server-filesystem}, {@code server-everything}) started at once by a host that waits
 * for each, beside serve with the three behind it, for {@code initialize} and for a one-shot client's tools. The
 * release artifacts come from {@code dist/target} (built by {@code ./mvnw -B -DskipTests package -pl dist -am}).
 *
 * <p>Run: {@code java -cp benchmarks/target/benchmarks.jar dev.execache.benchmarks.process.ServeStartFigures [ROUNDS]}
 */
public final class ServeStartFigures {
    private static final int ROUNDS = 11;
    private static final String INITIALIZE = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
            + "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"figures\",\"version\":\"1\"}}}\n";
    private static final String LIST_TOOLS = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
            + "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n";
    /** One of server-memory's tools: the list a one-shot client gets must hold it. */
    private static final String MEMORY_TOOL = "create_entities";
    /** One tool of each of the three servers: server-memory, server-filesystem, server-everything. */
    private static final List<String> THREE_TOOLS = List.of(MEMORY_TOOL, "read_text_file", "get-annotated-message");

    private ServeStartFigures() {
    }

    private record Command(List<String> command, Map<String, String> env) {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : ROUNDS;
        Path dist = Path.of(System.getProperty("execache.dist", "dist/target")).toAbsolutePath().normalize();
        Path node = Artifacts.nodeDirectory();
        Path memory = node.resolve("node_modules/@modelcontextprotocol/server-memory/dist/index.js");
        Path filesystem = node.resolve("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
        Path everything = node.resolve("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
        Path scratch = Files.createTempDirectory("execache-serve-start");
        try {
            Path archive = unpack(dist, scratch);
            Path npm = npmInstall(dist, scratch);
            Path work = Files.createDirectories(scratch.resolve("work"));
            Path withMemory = Files.createDirectories(scratch.resolve("with-memory"));
            Files.writeString(withMemory.resolve("execache.yaml"), """
                    servers:
                      memory:
                        command: node
                        args: ["%s"]
                        env: {MEMORY_FILE_PATH: "%s"}
                    """.formatted(memory, scratch.resolve("memory.jsonl")));
            Map<String, String> home = home(scratch.resolve("home"));
            Map<String, Command> commands = new LinkedHashMap<>();
            commands.put("server-memory (node)", new Command(List.of("node", memory.toString()),
                    Map.of("MEMORY_FILE_PATH", scratch.resolve("memory.jsonl").toString())));
            commands.put("serve, archive", new Command(List.of(archive.resolve("bin/execache").toString(), "serve"), home));
            commands.put("serve, npm package", new Command(List.of(npm.toString(), "serve"), home));
            Map<String, String> noPool = new LinkedHashMap<>(home);
            noPool.put("EXECACHE_WARM_POOL", "0");
            commands.put("serve, archive, no warm pool", new Command(List.of(archive.resolve("bin/execache").toString(),
                    "serve"), noPool));
            commands.put("serve, archive, java -jar (no launcher flags)", new Command(List.of(
                    archive.resolve("runtime/bin/java").toString(), "-jar",
                    archive.resolve("lib/execache-client.jar").toString(), "serve"), home));
            Map<String, Path> directories = new LinkedHashMap<>();
            commands.keySet().forEach(name -> directories.put(name, work));
            // a home of its own, as a person's after setup: its serve archive holds the classes a serve with servers loads
            commands.put("serve, archive, server-memory behind", new Command(List.of(archive.resolve("bin/execache")
                    .toString(), "serve"), home(scratch.resolve("home-with-memory"))));
            directories.put("serve, archive, server-memory behind", withMemory);

            // the launcher writes serve's class-data archive when a serve ends at the end of its input: once each
            for (String name : List.of("serve, archive", "serve, npm package", "serve, archive, server-memory behind")) {
                initializeAnswered(commands.get(name), directories.get(name));
            }
            Map<String, List<Double>> millis = new LinkedHashMap<>();
            commands.keySet().forEach(name -> millis.put(name, new ArrayList<>()));
            Map<String, List<Double>> cpu = new LinkedHashMap<>();
            commands.keySet().forEach(name -> cpu.put(name, new ArrayList<>()));
            List<String> names = new ArrayList<>(commands.keySet());
            for (int round = 0; round < rounds; round++) {
                for (int turn = 0; turn < names.size(); turn++) {
                    String name = names.get((round + turn) % names.size());
                    double[] answered = initializeAnswered(commands.get(name), directories.get(name));
                    millis.get(name).add(answered[0]);
                    cpu.get(name).add(answered[1]);
                }
                System.err.println("serve start: round " + (round + 1) + " of " + rounds);
            }
            print("initialize answered, ms from the start of the process (median of " + rounds
                    + " rounds, in turns); load average " + Machine.loadAverage(), millis, "server-memory (node)");
            print("CPU time of that process (its threads, not its children) until it answered, ms", cpu,
                    "server-memory (node)");

            // a one-shot client: initialize, tools/list, end of input, until it has the server's tools
            Map<String, List<Double>> listed = new LinkedHashMap<>();
            listed.put("server-memory (node)", new ArrayList<>());
            listed.put("serve, archive, server-memory behind", new ArrayList<>());
            // execache run after setup moved the server behind execache, beside a run with no server configured
            Path hello = Path.of(System.getProperty("execache.examples", "examples")).toAbsolutePath()
                    .resolve("hello.ts");
            Files.copy(hello, work.resolve("hello.ts"));
            Files.copy(hello, withMemory.resolve("hello.ts"));
            List<String> run = List.of(archive.resolve("bin/execache").toString(), "run", "hello.ts", "--no-cache");
            Map<String, List<Double>> runs = new LinkedHashMap<>();
            runs.put("run, no server configured", new ArrayList<>());
            runs.put("run, server-memory configured", new ArrayList<>());
            // the first run starts the resident server beside it: every timed run is one a person meets after that
            ranFor(run, home, work);
            try {
                for (int round = 0; round < rounds; round++) {
                    if (round % 2 == 0) {
                        listed.get("server-memory (node)").add(toolsListed(commands.get("server-memory (node)"), work));
                        listed.get("serve, archive, server-memory behind").add(toolsListed(
                                commands.get("serve, archive, server-memory behind"), withMemory));
                        runs.get("run, no server configured").add(ranFor(run, home, work));
                        runs.get("run, server-memory configured").add(ranFor(run, home, withMemory));
                    } else {
                        listed.get("serve, archive, server-memory behind").add(toolsListed(
                                commands.get("serve, archive, server-memory behind"), withMemory));
                        listed.get("server-memory (node)").add(toolsListed(commands.get("server-memory (node)"), work));
                        runs.get("run, server-memory configured").add(ranFor(run, home, withMemory));
                        runs.get("run, no server configured").add(ranFor(run, home, work));
                    }
                    System.err.println("one-shot client and run: round " + (round + 1) + " of " + rounds);
                }
            } finally {
                // the resident server of the scratch home
                ProcessBuilder stop = new ProcessBuilder(archive.resolve("bin/execache").toString(), "server", "stop")
                        .directory(work.toFile()).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD);
                clean(stop.environment());
                stop.environment().putAll(home);
                stop.start().waitFor();
            }
            print("a one-shot client (initialize, tools/list, end of input) has server-memory's tools, ms from the start"
                    + " of the process; load average " + Machine.loadAverage(), listed, "server-memory (node)");
            print("execache run hello.ts --no-cache (the resident server up), ms until it exited; load average "
                    + Machine.loadAverage(), runs, "run, no server configured");

            firstStarts(commands.get("server-memory (node)"), archive, work, withMemory, scratch, rounds);
            threeServers(archive, memory, filesystem, everything, scratch, rounds);
        } finally {
            Scratch.deleteTree(scratch);
        }
    }

    /**
     * A person's first start: serve in a fresh home, where the launcher finds no class-data archive yet (it writes one
     * at the end of that serve's input, after the answer timed here), alone and with {@code server-memory} behind,
     * beside {@code server-memory} alone; each round in a new home.
     */
    private static void firstStarts(Command node, Path archive, Path work, Path withMemory, Path scratch, int rounds)
            throws IOException, InterruptedException {
        List<String> serve = List.of(archive.resolve("bin/execache").toString(), "serve");
        Map<String, List<Double>> millis = new LinkedHashMap<>();
        millis.put("server-memory (node)", new ArrayList<>());
        millis.put("serve, archive, first start", new ArrayList<>());
        millis.put("serve, archive, server-memory behind, first start", new ArrayList<>());
        for (int round = 0; round < rounds; round++) {
            millis.get("server-memory (node)").add(initializeAnswered(node, work)[0]);
            millis.get("serve, archive, first start").add(initializeAnswered(
                    new Command(serve, home(scratch.resolve("first-home-" + round))), work)[0]);
            millis.get("serve, archive, server-memory behind, first start").add(initializeAnswered(
                    new Command(serve, home(scratch.resolve("first-home-with-memory-" + round))), withMemory)[0]);
            System.err.println("first start: round " + (round + 1) + " of " + rounds);
        }
        print("initialize answered at a first start in a fresh home (no class-data archive yet), ms from the start of"
                + " the process; load average " + Machine.loadAverage(), millis, "server-memory (node)");
    }

    /**
     * Three servers as a host starts them, at once, waiting for each (until the last has answered), beside serve with
     * the three behind it: {@code initialize}, then a one-shot client's tools.
     */
    private static void threeServers(Path archive, Path memory, Path filesystem, Path everything, Path scratch,
            int rounds) throws IOException, InterruptedException {
        Path withThree = Files.createDirectories(scratch.resolve("with-three"));
        Files.writeString(withThree.resolve("execache.yaml"), """
                servers:
                  memory:
                    command: node
                    args: ["%s"]
                    env: {MEMORY_FILE_PATH: "%s"}
                  files:
                    command: node
                    args: ["%s", "%s"]
                  everything:
                    command: node
                    args: ["%s", "stdio"]
                """.formatted(memory, scratch.resolve("memory-three.jsonl"), filesystem, withThree, everything));
        List<Command> alone = List.of(
                new Command(List.of("node", memory.toString()),
                        Map.of("MEMORY_FILE_PATH", scratch.resolve("memory-three.jsonl").toString())),
                new Command(List.of("node", filesystem.toString(), withThree.toString()), Map.of()),
                new Command(List.of("node", everything.toString(), "stdio"), Map.of()));
        Command serve = new Command(List.of(archive.resolve("bin/execache").toString(), "serve"),
                home(scratch.resolve("home-with-three")));
        // its first serve writes the archive of a serve with these servers behind it
        initializeAnswered(serve, withThree);
        String aloneName = "three servers (node), started at once";
        String serveName = "serve, archive, the three behind";
        Map<String, List<Double>> initialized = new LinkedHashMap<>();
        Map<String, List<Double>> listed = new LinkedHashMap<>();
        for (Map<String, List<Double>> figures : List.of(initialized, listed)) {
            figures.put(aloneName, new ArrayList<>());
            figures.put(serveName, new ArrayList<>());
        }
        for (int round = 0; round < rounds; round++) {
            for (int turn = 0; turn < 2; turn++) {
                if ((round + turn) % 2 == 0) {
                    initialized.get(aloneName).add(atOnce(alone, withThree, command -> initializeAnswered(command,
                            withThree)[0]));
                    listed.get(aloneName).add(atOnce(alone, withThree, command -> toolsListed(command, withThree,
                            List.of())));
                } else {
                    initialized.get(serveName).add(initializeAnswered(serve, withThree)[0]);
                    listed.get(serveName).add(toolsListed(serve, withThree, THREE_TOOLS));
                }
            }
            System.err.println("three servers: round " + (round + 1) + " of " + rounds);
        }
        print("initialize answered (each of the three, or serve), ms from the start; load average "
                + Machine.loadAverage(), initialized, aloneName);
        print("a one-shot client has the three servers' tools, ms from the start; load average " + Machine.loadAverage(),
                listed, aloneName);
    }

    private interface Timed {
        double millis(Command command) throws IOException, InterruptedException;
    }

    /** The commands started at once, each timed from its own start: the slowest one's time. */
    private static double atOnce(List<Command> commands, Path directory, Timed timed)
            throws IOException, InterruptedException {
        ExecutorService threads = Executors.newFixedThreadPool(commands.size());
        try {
            List<Future<Double>> times = new ArrayList<>();
            for (Command command : commands) {
                times.add(threads.submit(() -> timed.millis(command)));
            }
            double slowest = 0;
            for (Future<Double> time : times) {
                slowest = Math.max(slowest, time.get());
            }
            return slowest;
        } catch (ExecutionException e) {
            throw new IllegalStateException("a server of " + directory + " failed", e.getCause());
        } finally {
            threads.shutdownNow();
        }
    }

    private static void print(String title, Map<String, List<Double>> millis, String base) {
        double base0 = Samples.median(millis.get(base));
        System.out.println(title);
        for (Map.Entry<String, List<Double>> row : millis.entrySet()) {
            double median = Samples.median(row.getValue());
            System.out.printf(Locale.ROOT, "%-45s %6.0f ms  %4.1fx %s  (min %.0f, max %.0f)%n", row.getKey(),
                    median, median / base0, base, row.getValue().stream().mapToDouble(Double::doubleValue).min().orElse(0),
                    row.getValue().stream().mapToDouble(Double::doubleValue).max().orElse(0));
        }
    }

    /** Ms from just before the process starts until a one-shot client has the tools, server-memory's among them. */
    private static double toolsListed(Command command, Path directory) throws IOException, InterruptedException {
        return toolsListed(command, directory, List.of(MEMORY_TOOL));
    }

    /** Ms from just before the process starts until a one-shot client has the tools, these among them. */
    private static double toolsListed(Command command, Path directory, List<String> tools)
            throws IOException, InterruptedException {
        long start = System.nanoTime();
        Process process = start(command, directory);
        double millis;
        try (OutputStream in = process.getOutputStream();
                BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
                        StandardCharsets.UTF_8))) {
            in.write(INITIALIZE.getBytes(StandardCharsets.UTF_8));
            in.flush();
            String line = answer(out, "\"id\":1", command);
            in.write(LIST_TOOLS.getBytes(StandardCharsets.UTF_8));
            in.flush();
            line = answer(out, "\"id\":2", command);
            millis = Samples.millisSince(start);
            for (String tool : tools) {
                if (!line.contains("\"" + tool + "\"") && !line.contains("__" + tool + "\"")) {
                    throw new IllegalStateException(String.join(" ", command.command()) + " listed no " + tool);
                }
            }
        }
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
        }
        return millis;
    }

    private static String answer(BufferedReader out, String id, Command command) throws IOException {
        String line;
        while ((line = out.readLine()) != null && !line.contains(id)) {
            // notifications before the answer
        }
        if (line == null) {
            throw new IllegalStateException(String.join(" ", command.command()) + " ended without answering");
        }
        return line;
    }

    /** Ms from just before {@code execache run} starts until it exited, which must be with 0. */
    private static double ranFor(List<String> run, Map<String, String> env, Path directory)
            throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(run).directory(directory.toFile())
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD);
        clean(builder.environment());
        builder.environment().putAll(env);
        long start = System.nanoTime();
        int exit = builder.start().waitFor();
        double millis = Samples.millisSince(start);
        if (exit != 0) {
            throw new IllegalStateException(String.join(" ", run) + " in " + directory + " exited with " + exit);
        }
        return millis;
    }

    private static Process start(Command command, Path directory) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(command.command()).directory(directory.toFile())
                .redirectError(ProcessBuilder.Redirect.DISCARD);
        clean(builder.environment());
        builder.environment().putAll(command.env());
        return builder.start();
    }

    private static void clean(Map<String, String> environment) {
        // the resident server of the home given, not one of the machine's user
        environment.remove("XDG_RUNTIME_DIR");
        environment.keySet().removeIf(name -> name.startsWith("EXECACHE_") || name.startsWith("JAVA_TOOL")
                || name.equals("JDK_JAVA_OPTIONS") || name.equals("_JAVA_OPTIONS"));
    }

    /** A home of its own: the launcher's class-data archives and serve's store go there. */
    private static Map<String, String> home(Path home) throws IOException {
        Files.createDirectories(home);
        return Map.of("HOME", home.toString(), "XDG_CACHE_HOME", home.resolve(".cache").toString(),
                "XDG_CONFIG_HOME", home.resolve(".config").toString(), "XDG_STATE_HOME", home.resolve(".state").toString());
    }

    /** The linux-x64 archive, unpacked. */
    private static Path unpack(Path dist, Path scratch) throws IOException, InterruptedException {
        Path tar;
        try (var found = Files.list(dist)) {
            tar = found.filter(path -> path.getFileName().toString().endsWith("-linux-x64.tar.gz")).findFirst()
                    .orElseThrow(() -> new IllegalStateException("no linux-x64 archive in " + dist
                            + ": ./mvnw -B -DskipTests package -pl dist -am"));
        }
        Path opt = Files.createDirectories(scratch.resolve("opt"));
        run(List.of("tar", "-xzf", tar.toString()), opt);
        try (var unpacked = Files.list(opt)) {
            return unpacked.findFirst().orElseThrow();
        }
    }

    /** The npm packages, installed as {@code npm install} installs them (the deno dependency from npm's cache). */
    private static Path npmInstall(Path dist, Path scratch) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("npm", "install", "--prefer-offline", "--no-audit", "--no-fund",
                "--loglevel=error"));
        try (var found = Files.list(dist)) {
            found.filter(path -> path.getFileName().toString().endsWith(".tgz")).forEach(path -> command.add(path.toString()));
        }
        Path project = Files.createDirectories(scratch.resolve("npm"));
        Files.writeString(project.resolve("package.json"), "{\"private\":true}");
        run(command, project);
        return project.resolve("node_modules/.bin/execache");
    }

    private static void run(List<String> command, Path directory) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).directory(directory.toFile()).inheritIO().start();
        if (process.waitFor() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " failed");
        }
    }

    /**
     * Ms from just before the process starts to its answer to initialize, and the CPU time it had used by then (what
     * the load of the machine changes least); then its input ends and it exits.
     */
    private static double[] initializeAnswered(Command command, Path directory) throws IOException, InterruptedException {
        long start = System.nanoTime();
        Process process = start(command, directory);
        double millis;
        double cpuMillis;
        try (OutputStream in = process.getOutputStream();
                BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
                        StandardCharsets.UTF_8))) {
            in.write(INITIALIZE.getBytes(StandardCharsets.UTF_8));
            in.flush();
            String line;
            while ((line = out.readLine()) != null && !line.contains("\"id\":1")) {
                // notifications and logs before the answer
            }
            millis = Samples.millisSince(start);
            // the launchers exec java: the process started is the one that answered
            cpuMillis = process.info().totalCpuDuration().map(Duration::toMillis).orElse(-1L);
            if (line == null) {
                throw new IllegalStateException(String.join(" ", command.command()) + " ended without answering");
            }
        }
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
        }
        return new double[] {millis, cpuMillis};
    }
}
