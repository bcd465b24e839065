package dev.execache.cli;

import dev.execache.gateway.Downstream;
import org.awaitility.Awaitility;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The resident server's own behaviour (issue 17), through the launcher as a person uses it:
 * started on demand, stopped when idle, replaced by a client of another build, many clients at
 * once, Ctrl-C, a killed server, and a socket directory others can open.
 */
class ResidentServerIT {
    private static final Pattern PID = Pattern.compile("(?m)^pid +(\\d+)$");
    private static final Pattern SERVED = Pattern.compile("(?m)^served +(\\d+) commands");
    private static final Duration PATIENCE = Duration.ofMinutes(2);

    @TempDir
    Path dir;

    private Path runtime;
    private Path db;
    private CliProcess cli;
    private final List<ProcessHandle> toStop = new ArrayList<>();

    @BeforeEach
    void setUp() throws IOException {
        runtime = Files.createDirectory(dir.resolve("run"), PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwx------")));
        CliProcess.throughServer(runtime);
        cli = new CliProcess(dir);
        db = dir.resolve("cache.db");
        Files.writeString(dir.resolve("one.ts"), "return 1 + 1;\n");
        Files.writeString(dir.resolve("double.ts"), "return context.n * 2;\n");
        Files.writeString(dir.resolve("slow.ts"), "await new Promise((r) => setTimeout(r, 300_000));\nreturn 'late';\n");
    }

    @AfterEach
    void tearDown() throws Exception {
        try {
            new CliProcess(dir).run("server", "stop");
        } finally {
            CliProcess.throughServer(null);
            for (ProcessHandle process : toStop) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
            }
        }
    }

    @Test
    void startsOnFirstUseThenServesCommandsFromAClientThatLoadsNoFramework() throws Exception {
        var first = cli.run("run", "one.ts", "--db", db.toString());
        long pid = awaitServer();
        Path classes = dir.resolve("client-classes.log");
        var second = new CliProcess(dir).env("JDK_JAVA_OPTIONS", "-Xlog:class+load:file=" + classes)
                .run("run", "one.ts", "--db", db.toString());
        long servedBefore = served();
        var inProcess = cli.run("run", "one.ts", "--db", db.toString(), "--no-daemon");
        var byEnvironment = new CliProcess(dir).env("EXECACHE_NO_DAEMON", "1").run("run", "one.ts", "--db", db.toString());

        assertThat(first.exitCode()).as(first.toString()).isZero();
        assertThat(first.stdout()).isEqualTo("2\n");
        assertThat(first.stderr()).contains("cache miss");
        assertThat(second.exitCode()).as(second.toString()).isZero();
        assertThat(second.stdout()).isEqualTo("2\n");
        assertThat(second.stderr()).contains("cache hit");
        String loaded = Files.readString(classes);
        assertThat(loaded).contains("dev.execache.cli.client.ThinClient")
                .doesNotContain("com.google.inject").doesNotContain("picocli.").doesNotContain("com.fasterxml.jackson")
                .doesNotContain("org.jdbi").doesNotContain("org.sqlite").doesNotContain("dev.execache.cli.Main ");
        try (JarFile client = new JarFile(CliProcess.jar().resolveSibling("execache-client.jar").toFile())) {
            assertThat(client.getManifest().getMainAttributes().getValue("Class-Path"))
                    .as("the client's jar names no other jar: a class path with the whole jar on it makes every command"
                            + " open and index that jar").isNull();
        }
        assertThat(servedBefore).isEqualTo(1);
        assertThat(inProcess.stderr()).as(inProcess.toString()).contains("cache hit");
        assertThat(byEnvironment.stderr()).as(byEnvironment.toString()).contains("cache hit");
        assertThat(served()).as("--no-daemon and EXECACHE_NO_DAEMON=1 ran in their own process").isEqualTo(1);
        assertThat(serverPid()).isEqualTo(pid);
    }

    /**
     * The MCP servers a command starts are that command's: they inherit the typed command's
     * environment and working directory, not those of the shell that happened to start the server.
     */
    @Test
    void theServersACommandStartsGetItsEnvironmentAndDirectoryNotTheResidentServers() throws Exception {
        Path seen = dir.resolve("seen.txt");
        Path project = Files.createDirectory(dir.resolve("project"));
        Path config = Files.writeString(project.resolve("execache.yaml"), """
                servers:
                  lab:
                    command: sh
                    args: ["-c", "{ env; echo WORKING_DIR=$(pwd); } > '%s'; exec node '%s'"]
                """.formatted(seen, Downstream.nodeModules().resolveSibling("lab-server.mjs")));
        // code that names the server, so that the run starts it
        Files.writeString(project.resolve("one.ts"), "return typeof tools.lab;\n");
        var start = new CliProcess(dir).env("LAB_TOKEN", "the-shell-that-started-the-server").run("server", "start");
        assertThat(start.exitCode()).as(start.toString()).isZero();

        var run = new CliProcess(project).env("LAB_TOKEN", "the-typed-command")
                .run("run", "one.ts", "--db", db.toString(), "--config", config.toString());

        assertThat(run.exitCode()).as(run.toString()).isZero();
        assertThat(served()).as("the command went through the server").isEqualTo(1);
        assertThat(Files.readString(seen)).contains("LAB_TOKEN=the-typed-command")
                .doesNotContain("the-shell-that-started-the-server")
                .contains("WORKING_DIR=" + project.toRealPath());
    }

    /**
     * The servers a configuration lists keep running between commands that start the same servers
     * (same environment and directory), so a command does not start them again; another environment
     * gets servers of its own.
     */
    @Test
    void theServersOfAConfigurationKeepRunningBetweenCommandsThatNameTheSameOnes() throws Exception {
        Path project = Files.createDirectory(dir.resolve("project"));
        Path config = Files.writeString(project.resolve("execache.yaml"), """
                servers:
                  lab:
                    command: node
                    args: ['%s']
                """.formatted(Downstream.nodeModules().resolveSibling("lab-server.mjs")));
        Files.writeString(project.resolve("pid.ts"), "return (await tools.lab.pid({})).pid;\n");
        CliProcess inProject = new CliProcess(project).env("LAB_TOKEN", "one");
        assertThat(cli.run("server", "start").exitCode()).isZero();

        var first = inProject.run("run", "pid.ts", "--no-cache", "--db", db.toString(), "--config", config.toString());
        var second = inProject.run("run", "pid.ts", "--no-cache", "--db", db.toString(), "--config", config.toString());
        var otherEnvironment = new CliProcess(project).env("LAB_TOKEN", "two")
                .run("run", "pid.ts", "--no-cache", "--db", db.toString(), "--config", config.toString());
        var status = cli.run("server", "status");

        assertThat(first.exitCode()).as(first.toString()).isZero();
        assertThat(second.exitCode()).as(second.toString()).isZero();
        assertThat(otherEnvironment.exitCode()).as(otherEnvironment.toString()).isZero();
        assertThat(served()).as("the commands went through the server").isEqualTo(3);
        assertThat(second.stdout()).as("the same server process answered").isEqualTo(first.stdout());
        assertThat(otherEnvironment.stdout()).as("another environment, another server").isNotEqualTo(first.stdout());
        assertThat(status.stdout()).contains("servers lab: ");
    }

    /** {@code execache tools} asks the resident server, which answers from the servers it keeps running. */
    @Test
    void toolsGoesThroughTheServerAndListsTheServersItKeepsRunning() throws Exception {
        Path project = Files.createDirectory(dir.resolve("project"));
        Path config = Files.writeString(project.resolve("execache.yaml"), """
                servers:
                  lab:
                    command: node
                    args: ['%s']
                """.formatted(Downstream.nodeModules().resolveSibling("lab-server.mjs")));
        assertThat(cli.run("server", "start").exitCode()).isZero();

        var first = new CliProcess(project).run("tools", "--config", config.toString());
        var second = new CliProcess(project).run("tools", "--config", config.toString());
        var status = cli.run("server", "status");

        assertThat(first.exitCode()).as(first.toString()).isZero();
        assertThat(second.exitCode()).as(second.toString()).isZero();
        assertThat(served()).as("both went through the server").isEqualTo(2);
        assertThat(second.stdout()).contains("lab__get_count").isEqualTo(first.stdout());
        assertThat(status.stdout()).contains("servers lab: ");
    }

    @Test
    void stopsAfterItsIdlePeriod() throws Exception {
        var start = new CliProcess(dir).env("EXECACHE_SERVER_IDLE", "1s").run("server", "start");
        String log = Files.readString(runtime.resolve("execache/server.log"));
        long pid = Long.parseLong(ServerSuite.field(Pattern.compile("resident server pid (\\d+) listening"), log));
        ProcessHandle.of(pid).ifPresent(toStop::add);

        assertThat(start.exitCode()).as(start.toString()).isZero();
        ProcessHandle.of(pid).orElseThrow().onExit().get(PATIENCE.toMinutes(), TimeUnit.MINUTES);
        assertThat(Files.readString(runtime.resolve("execache/server.log"))).contains("idle for 1s, stopping");
        assertThat(runtime.resolve("execache/server.sock")).doesNotExist();
        assertThat(cli.run("server", "status").exitCode()).isEqualTo(1);
    }

    @Test
    void aClientOfAnotherBuildReplacesTheServer() throws Exception {
        Path otherBuild = Files.createDirectories(dir.resolve("other")).resolve("execache.jar");
        Files.copy(CliProcess.jar(), otherBuild);
        Files.setLastModifiedTime(otherBuild, FileTime.fromMillis(
                Files.getLastModifiedTime(CliProcess.jar()).toMillis() - Duration.ofDays(1).toMillis()));
        ProcessBuilder oldStart = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", otherBuild.toString(), "dev.execache.cli.client.ThinClient", "server", "start")
                .directory(dir.toFile()).redirectErrorStream(true).redirectOutput(dir.resolve("old.txt").toFile());
        oldStart.environment().put("XDG_RUNTIME_DIR", runtime.toString());
        oldStart.environment().put("EXECACHE_SERVER_IDLE", "5m");
        Process old = oldStart.start();
        assertThat(old.waitFor(PATIENCE.toMinutes(), TimeUnit.MINUTES)).isTrue();
        assertThat(old.exitValue()).as(Files.readString(dir.resolve("old.txt"))).isZero();
        long oldPid = serverPid();

        var run = cli.run("run", "one.ts", "--db", db.toString());

        assertThat(run.exitCode()).as(run.toString()).isZero();
        assertThat(run.stdout()).isEqualTo("2\n");
        // The old server may be gone already; if not, it ends.
        var oldServer = ProcessHandle.of(oldPid);
        if (oldServer.isPresent()) {
            oldServer.get().onExit().get(PATIENCE.toMinutes(), TimeUnit.MINUTES);
        }
        long newPid = awaitServer();
        assertThat(newPid).isNotEqualTo(oldPid);
        String build = "1:" + Files.size(CliProcess.jar()) + ":" + Files.getLastModifiedTime(CliProcess.jar()).toMillis();
        assertThat(status()).contains("build   " + build + "\n");
    }

    @Test
    void manyClientsAtOnceEachGetTheirOwnDirectoryEnvironmentAndStreams() throws Exception {
        assertThat(cli.run("server", "start").exitCode()).isZero();
        int clients = 6;
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        try {
            List<Future<CliProcess.Result>> results = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                Path own = Files.createDirectories(dir.resolve("client" + i));
                Files.writeString(own.resolve("execache.yaml"), "tools:\n  github: v" + i + "\n");
                Files.writeString(own.resolve("mine.ts"), "return context.n * 2;\n");
                int n = i;
                CliProcess client = new CliProcess(own).env("EXECACHE_SQLITE_PATH", own.resolve("own.db").toString());
                results.add(pool.submit(() -> n % 2 == 0
                        ? client.run("run", "mine.ts", "--json", "--context", "{\"n\":" + n + "}")
                        : client.runWithInput("{\"n\":" + n + "}", "run", "mine.ts", "--json", "--context", "@-")));
            }
            for (int i = 0; i < clients; i++) {
                var result = results.get(i).get(PATIENCE.toMinutes(), TimeUnit.MINUTES);
                assertThat(result.exitCode()).as(result.toString()).isZero();
                assertThat(result.stdout()).contains("\"result\":" + (2 * i) + ",").contains("\"cache\":\"miss\"");
                assertThat(dir.resolve("client" + i).resolve("own.db")).exists();
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(served()).isEqualTo(clients);
    }

    @Test
    void ctrlCInTheClientStopsTheCodeInTheServer() throws Exception {
        assertThat(cli.run("server", "start").exitCode()).isZero();
        long pid = serverPid();
        // As at a terminal: SIGINT as its default, even when the build runs as a background job (which ignores it).
        Path launcher = dir.resolve("interruptible");
        Files.writeString(launcher, "#!/bin/sh\nexec env --default-signal=INT '" + CliProcess.launcher() + "' \"$@\"\n");
        Files.setPosixFilePermissions(launcher, PosixFilePermissions.fromString("rwx------"));
        Set<Long> before = denos(pid);
        var slow = new CliProcess(dir).through(launcher).start("run", "slow.ts", "--db", db.toString(), "--timeout", "10m");
        awaitCondition("the server runs the command", () -> status().contains(" 1 running"));
        // A run whose limits differ from the warm pool's starts a Deno of its own: the one that is new.
        awaitCondition("a Deno runs the code", () -> !newDenos(pid, before).isEmpty());
        Set<Long> denos = newDenos(pid, before);

        new ProcessBuilder("kill", "-INT", Long.toString(slow.process().pid())).start().waitFor();
        var cancelled = slow.finish();

        assertThat(cancelled.exitCode()).as(cancelled.toString()).isEqualTo(130);
        awaitCondition("the Deno running the code is gone",
                () -> denos.stream().anyMatch(deno -> ProcessHandle.of(deno).map(p -> !p.isAlive()).orElse(true)));
        awaitCondition("the server runs nothing", () -> status().contains(" 0 running"));
        var after = cli.run("run", "one.ts", "--db", db.toString());
        assertThat(after.stdout()).as(after.toString()).isEqualTo("2\n");
        assertThat(serverPid()).isEqualTo(pid);
    }

    @Test
    void aServerKilledMidCommandFailsThatCommandClearlyAndLosesNothing() throws Exception {
        assertThat(cli.run("server", "start").exitCode()).isZero();
        long pid = serverPid();
        var stored = cli.run("run", "one.ts", "--db", db.toString());
        var slow = cli.start("run", "slow.ts", "--db", db.toString(), "--timeout", "10m");
        awaitCondition("the server runs the command", () -> status().contains(" 1 running"));
        ProcessHandle server = ProcessHandle.of(pid).orElseThrow();
        denos(pid).forEach(deno -> ProcessHandle.of(deno).ifPresent(toStop::add));

        new ProcessBuilder("kill", "-KILL", Long.toString(pid)).start().waitFor();
        var inFlight = slow.finish();
        server.onExit().get(PATIENCE.toMinutes(), TimeUnit.MINUTES);
        var next = cli.run("run", "one.ts", "--db", db.toString());

        assertThat(stored.stderr()).as(stored.toString()).contains("cache miss");
        assertThat(inFlight.exitCode()).as(inFlight.toString()).isEqualTo(3);
        assertThat(inFlight.stderr()).contains("the resident server ended before the command finished");
        assertThat(next.exitCode()).as(next.toString()).isZero();
        assertThat(next.stderr()).contains("cache hit");
        assertThat(awaitServer()).isNotEqualTo(pid);
    }

    @Test
    void aSocketDirectoryOthersCanOpenIsRefused() throws Exception {
        Path open = Files.createDirectory(runtime.resolve("execache"));
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxr-xr-x"));

        var run = cli.run("run", "one.ts", "--db", db.toString());
        ProcessBuilder server = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", CliProcess.jar().toString(), "dev.execache.cli.resident.ResidentServer")
                .redirectErrorStream(true).redirectOutput(dir.resolve("server.txt").toFile());
        server.environment().put("XDG_RUNTIME_DIR", runtime.toString());
        Process refused = server.start();
        assertThat(refused.waitFor(PATIENCE.toMinutes(), TimeUnit.MINUTES)).isTrue();

        assertThat(run.exitCode()).as(run.toString()).isZero();
        assertThat(run.stdout()).isEqualTo("2\n");
        assertThat(run.stderr()).contains("not using the resident server").contains(open.toString())
                .contains("rwxr-xr-x");
        assertThat(refused.exitValue()).isEqualTo(3);
        assertThat(Files.readString(dir.resolve("server.txt"))).contains("refuses to start").contains("rwxr-xr-x");
        try (var files = Files.list(open)) {
            assertThat(files.collect(Collectors.toList())).as("no socket, no log").isEmpty();
        }
    }

    private String status() throws IOException, InterruptedException {
        return cli.run("server", "status").stdout();
    }

    private long serverPid() throws IOException, InterruptedException {
        String status = status();
        long pid = Long.parseLong(ServerSuite.field(PID, status));
        ProcessHandle.of(pid).ifPresent(toStop::add);
        return pid;
    }

    private long served() throws IOException, InterruptedException {
        return Long.parseLong(ServerSuite.field(SERVED, status()));
    }

    /** Waits until a server answers (one started in the background by a command) and returns its pid. */
    private long awaitServer() throws Exception {
        awaitCondition("a server answers", () -> cli.run("server", "status").exitCode() == 0);
        return serverPid();
    }

    private static Set<Long> newDenos(long serverPid, Set<Long> before) {
        Set<Long> now = new HashSet<>(denos(serverPid));
        now.removeAll(before);
        return now;
    }

    private static Set<Long> denos(long serverPid) {
        return ProcessHandle.of(serverPid).orElseThrow().descendants()
                .filter(process -> process.info().command().map(command -> command.endsWith("deno")).orElse(false))
                .map(ProcessHandle::pid).collect(Collectors.toSet());
    }

    interface Check {
        boolean holds() throws Exception;
    }

    private static void awaitCondition(String what, Check check) {
        Awaitility.await(what).atMost(PATIENCE).pollInSameThread().pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(50)).until(check::holds);
    }
}
