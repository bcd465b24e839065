package dev.execache.dist;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.execache.sandbox.DenoSandboxSettings;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
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

    /** The commit of the sources the build came from, asked of git with this machine's own environment. */
    private static String headCommit() throws Exception {
        Process git = new ProcessBuilder("git", "rev-parse", "--short=12", "HEAD").directory(Release.sources().toFile())
                .redirectErrorStream(true).start();
        String output = new String(git.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(git.waitFor()).as("git rev-parse: " + output).isZero();
        return output;
    }
}
