package dev.execache.dist;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.execache.sandbox.DenoSandboxSettings;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The linux-x64 archive, unpacked on a machine without Java, Deno, Node.js, npm, Maven or the sources. */
class LinuxArchiveIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path root;
    private static NoJavaMachine machine;
    private static Path installation;
    private static Path execache;

    @BeforeAll
    static void unpack() throws Exception {
        machine = NoJavaMachine.in(root, Set.of("node", "nodejs", "npm", "npx", "corepack"));
        String found = machine.run(root, List.of("bash", "-c", "command -v node npm deno || echo none")).stdout();
        assertThat(found.strip()).as("node, npm or deno on the PATH of a machine without them").isEqualTo("none");
        Path opt = Files.createDirectories(root.resolve("opt"));
        machine.run(opt, List.of("tar", "-xzf", Release.linuxArchive().toString())).succeeded();
        installation = opt.resolve("execache-" + Release.version());
        execache = installation.resolve("bin/execache");
    }

    @AfterAll
    static void stopTheResidentServer() {
        if (machine != null) {
            machine.run(machine.work, List.of(execache.toString(), "server", "stop"));
        }
    }

    @Test
    void versionNamesTheReleaseAndTheCommitItWasBuiltFrom() throws Exception {
        String commit = headCommit();

        String version = machine.run(machine.work, List.of(execache.toString(), "--version")).succeeded().stdout();

        assertThat(version).startsWith("execache " + Release.version() + " (commit " + commit);
        assertThat(version).contains("Java 17");
    }

    @Test
    void linkedOntoThePathItFindsItsInstallation() throws Exception {
        machine.linkOntoPath(execache);

        String version = machine.run(machine.work, List.of("execache", "--version")).succeeded().stdout();

        assertThat(version).startsWith("execache " + Release.version() + " (");
    }

    @Test
    void runMissesThenHitsOnTheDefaultSqliteStoreWithItsOwnJava() throws Exception {
        Files.writeString(machine.work.resolve("hello.ts"), "return { greeting: `Hello, ${context.name}!` };\n");
        List<String> run = List.of(execache.toString(), "run", "hello.ts", "--context", "{\"name\":\"Ada\"}", "--json");

        JsonNode first = JSON.readTree(machine.run(machine.work, run).succeeded().stdout());
        JsonNode second = JSON.readTree(machine.run(machine.work, run).succeeded().stdout());

        assertThat(first.path("result").path("greeting").asText()).isEqualTo("Hello, Ada!");
        assertThat(first.path("cache").asText()).isEqualTo("miss");
        assertThat(second.path("cache").asText()).isEqualTo("hit");
        assertThat(second.path("result")).isEqualTo(first.path("result"));
        assertThat(root.resolve("cache/execache/cache.db")).as("the sqlite store in the user's cache").isRegularFile();
        try (Stream<Path> cache = Files.list(root.resolve("cache/execache"))) {
            assertThat(cache.map(path -> path.getFileName().toString()))
                    .as("no Deno installed: the archive brings its own")
                    .noneMatch(name -> name.startsWith("deno-" + DenoSandboxSettings.DENO_VERSION));
        }
    }

    @Test
    void itsDenoIsThePinnedOne() {
        String version = machine.run(machine.work, List.of(installation.resolve("deno/deno").toString(), "--version"))
                .succeeded().stdout();

        assertThat(version).startsWith("deno " + Release.property("execache.denoVersion") + " ");
    }

    @Test
    void theTypeScriptSdkClientDrivesItsServe() throws Exception {
        JsonNode session = ServeDriver.drive(machine, machine.work, List.of(execache.toString(), "serve"));

        assertThat(session.path("server").path("name").asText()).isEqualTo("execache");
        assertThat(ServeDriver.toolNames(session)).contains("execute_code", "cache_stats");
        assertThat(session.path("first").path("result").path("sum").asInt()).isEqualTo(42);
        assertThat(session.path("first").path("cache").asText()).isEqualTo("miss");
        assertThat(session.path("second").path("cache").asText()).isEqualTo("hit");
    }

    @Test
    void theRuntimeHoldsTheModulesExecacheNeedsAndNoJdkTools() {
        String modules = machine.run(machine.work, List.of(installation.resolve("runtime/bin/java").toString(),
                "--list-modules")).succeeded().stdout();

        TreeSet<String> listed = new TreeSet<>();
        modules.lines().map(line -> line.replaceAll("@.*", "").strip()).forEach(listed::add);
        // the listed modules and those they require
        assertThat(listed).containsAll(Arrays.asList(System.getProperty("execache.runtimeModules").split(",")))
                .doesNotContain("jdk.compiler", "jdk.jlink", "jdk.jdeps", "jdk.jshell", "jdk.localedata");
        assertThat(installation.resolve("runtime/bin/javac")).doesNotExist();
        assertThat(installation.resolve("runtime/lib/jspawnhelper")).isExecutable();
    }

    /**
     * The class-data archive serve's first run writes as it ends holds every class of its jar that serve loads on
     * the way to its answers (a class the archive cannot take is loaded and verified from the jar at every start).
     */
    @Test
    void serveLoadsTheClassesOfItsJarFromTheArchiveItsFirstRunWrote() throws Exception {
        List<String> serve = List.of("bash", "-c", "printf '%s\\n' \"$REQUESTS\" | \"$EXECACHE\" serve");
        Map<String, String> environment = Map.of("EXECACHE", execache.toString(), "REQUESTS", String.join("\n",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\","
                        + "\"capabilities\":{},\"clientInfo\":{\"name\":\"it\",\"version\":\"1\"}}}",
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
                "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}"));
        machine.run(machine.work, serve, environment).succeeded();
        Path loaded = root.resolve("serve-classes.txt");
        Map<String, String> logged = new HashMap<>(environment);
        logged.put("JAVA_TOOL_OPTIONS", "-Xlog:class+load=info:file=" + loaded);

        String answers = machine.run(machine.work, serve, logged).succeeded().stdout();

        assertThat(answers).contains("\"id\":2").contains("execute_code");
        List<String> fromTheJar = Files.readAllLines(loaded).stream().filter(line -> line.contains(" source: file:"))
                .map(line -> line.replaceAll("^.*\\] (\\S+) source: .*$", "$1")).toList();
        // what JDK 17 never archives: Guice's aopalliance interfaces (Java 1.4 class files), Jdbi's JFR event
        assertThat(fromTheJar).as("classes serve loaded from its jar, not from its archive")
                .isNotEmpty().allMatch(name -> name.startsWith("org.aopalliance.")
                        || name.equals("org.jdbi.v3.core.statement.JdbiStatementEvent"));
    }

    /**
     * The compilers its Java runs serve with: on stdio (a host's process for one agent) the quick one alone, on one
     * thread; over HTTP (many agents, for long) both, the optimizing one once code stays hot.
     */
    @Test
    void serveOnStdioRunsTheQuickCompilerAloneAndOverHttpBoth() {
        Map<String, String> flags = Map.of("JAVA_TOOL_OPTIONS", "-XX:+PrintFlagsFinal");

        String stdio = machine.run(machine.work, List.of(execache.toString(), "serve", "--help"), flags).succeeded()
                .stdout();
        String http = machine.run(machine.work, List.of(execache.toString(), "serve", "--http", "127.0.0.1:0",
                "--help"), flags).succeeded().stdout();

        assertThat(flag(stdio, "TieredStopAtLevel")).isEqualTo("1");
        assertThat(flag(stdio, "CICompilerCount")).isEqualTo("1");
        assertThat(flag(http, "TieredStopAtLevel")).isEqualTo("4");
        assertThat(flag(http, "Tier4InvocationThreshold")).isEqualTo("25000");
    }

    /** A JVM flag's value as -XX:+PrintFlagsFinal prints it. */
    private static String flag(String printed, String name) {
        return printed.lines().filter(line -> line.matches("\\s*\\S+\\s+" + name + "\\s+:?=.*")).findFirst()
                .map(line -> line.replaceAll("^.*:?= *(\\S+).*$", "$1")).orElseThrow(() -> new AssertionError(
                        name + " is not among the flags printed:\n" + printed));
    }

    /**
     * An archive made before the Java it runs on was updated is made again (the JVM would ignore it, and every start
     * would load its classes anew), and the archives of this installation's earlier builds go.
     */
    @Test
    void anArchiveOlderThanItsJavaIsMadeAgainAndEarlierBuildsArchivesGo() throws Exception {
        Path archives = root.resolve("cache/execache/cds");
        String installationKey = installation.resolve("lib").toString().replace('/', '%');
        Path earlierBuild = Files.createDirectories(archives.resolve(Release.version() + "-000000000000"
                + installationKey));
        Path otherInstallation = Files.createDirectories(archives.resolve(Release.version() + "-000000000000"
                + "%elsewhere" + installationKey));
        machine.run(machine.work, List.of(execache.toString(), "--version")).succeeded();
        Path archive;
        try (Stream<Path> made = Files.list(archives)) {
            archive = made.filter(folder -> {
                String name = folder.getFileName().toString();
                return name.substring(name.indexOf('%')).equals(installationKey) && !folder.equals(earlierBuild);
            }).findFirst().orElseThrow().resolve("in-process.jsa");
        }
        assertThat(archive).isRegularFile();
        // made after this build (its files all carry the release's date), before its Java was updated
        FileTime built = Files.getLastModifiedTime(installation.resolve("lib/execache.jar"));
        Files.setLastModifiedTime(archive, FileTime.from(built.toInstant().plus(Duration.ofDays(1))));
        FileTime updated = FileTime.from(Instant.now());
        Files.setLastModifiedTime(installation.resolve("runtime/lib/modules"), updated);

        machine.run(machine.work, List.of(execache.toString(), "--version")).succeeded();

        assertThat(Files.getLastModifiedTime(archive)).as("the archive, made again").isGreaterThan(updated);
        assertThat(earlierBuild).doesNotExist();
        assertThat(otherInstallation).isDirectory();
    }

    /** The commit of the sources the build came from, asked of git with this machine's own environment. */
    private static String headCommit() throws Exception {
        Process git = new ProcessBuilder("git", "rev-parse", "--short=12", "HEAD").directory(Release.sources().toFile())
                .redirectErrorStream(true).start();
        String output = new String(git.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(git.waitFor()).as("git rev-parse: " + output).isZero();
        return output;
    }
}
