package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.cli.output.Output;
import dev.execache.gateway.Downstream;
import dev.execache.gateway.Json;
import dev.execache.store.redis.RedisServerProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The real command line, a real Deno and real stores, one process per command. */
class CommandLineIT {
    @TempDir
    Path dir;

    private CliProcess cli;
    private Path db;

    @BeforeEach
    void setUp() throws IOException {
        cli = new CliProcess(dir);
        db = dir.resolve("cache.db");
        Files.writeString(dir.resolve("shape.ts"), """
                const items: number[] = context.items;
                console.log("shaping", items.length, "items");
                return { total: items.reduce((a, b) => a + b, 0), user: context.user };
                """);
        Files.writeString(dir.resolve("fails.ts"), "throw new Error('no such repo: ' + context.repo);");
    }

    private static JsonNode json(CliProcess.Result result) throws IOException {
        return Json.MAPPER.readTree(result.stdout());
    }

    @Test
    void missThenHitAcrossTwoProcessesOnSqlite() throws Exception {
        var first = cli.run("run", "shape.ts", "--db", db.toString(), "--context", "{\"items\":[1,2,3],\"user\":\"ada\"}");
        var second = cli.run("run", "shape.ts", "--db", db.toString(), "--context", "{\"items\":[1,2,3],\"user\":\"ada\"}");

        assertThat(first.exitCode()).as(first.toString()).isZero();
        assertThat(first.stdout().trim()).isEqualTo("{\"total\":6,\"user\":\"ada\"}");
        assertThat(first.stderr()).contains("shaping 3 items").contains("cache miss");
        assertThat(second.exitCode()).as(second.toString()).isZero();
        assertThat(second.stdout()).isEqualTo(first.stdout());
        assertThat(second.stderr()).contains("shaping 3 items").contains("cache hit, saved");
    }

    /** A project of its own, whose server {@code acct} (the tests' lab server) runs as {@code account}. */
    private Path project(String name, String account, String token) throws IOException {
        Path project = Files.createDirectories(dir.resolve(name));
        Files.writeString(project.resolve("execache.yaml"), """
                servers:
                  acct:
                    command: node
                    args: ["%s"]
                    cache: true  # a local server's reads are asked every time unless it says to cache them
                    env: {LAB_ACCOUNT: %s, LAB_TOKEN: %s}
                """.formatted(Downstream.nodeModules().resolveSibling("lab-server.mjs"), account, token));
        Files.writeString(project.resolve("items.ts"), "return await tools.acct.private_items({});");
        return project;
    }

    @Test
    void aRunOfCodeThatCallsNoToolStartsNoServerAndOneThatNamesAServerStartsOnlyThatOneItsStderrInTheLog()
            throws Exception {
        Path project = Files.createDirectories(dir.resolve("noisy"));
        Files.writeString(project.resolve("execache.yaml"), """
                servers:
                  acct:
                    command: node
                    args: ["%s"]
                    env: {LAB_ACCOUNT: ann}
                  noisy:
                    command: node
                    args: ["-e", "require('fs').writeFileSync('%s', 'x'); console.error('noisy chatter'); process.exit(1)"]
                """.formatted(Downstream.nodeModules().resolveSibling("lab-server.mjs"), project.resolve("noisy-started")));
        Files.copy(Path.of("../examples/hello.ts"), project.resolve("hello.ts"));
        Files.writeString(project.resolve("items.ts"), "return await tools.acct.private_items({});");
        Path state = dir.resolve("state");
        CliProcess here = new CliProcess(project).env("XDG_STATE_HOME", state.toString());
        Path log = state.resolve("execache/servers.log");

        var hello = here.run("run", "hello.ts", "--db", db.toString(), "--context", "{\"name\":\"Ada\"}");

        assertThat(hello.exitCode()).as(hello.toString()).isZero();
        assertThat(hello.stdout()).isEqualTo("{\"greeting\":\"Hello, Ada!\",\"length\":3}\n");
        assertThat(hello.stderr()).as("nothing of the servers").doesNotContain("noisy").doesNotContain("acct")
                .doesNotContain("lab server");
        assertThat(project.resolve("noisy-started")).as("noisy was never started").doesNotExist();
        assertThat(log).as("no server wrote anything").doesNotExist();
        var noServers = cli.run("run", project.resolve("hello.ts").toString(), "--db", db.toString(), "--context",
                "{\"name\":\"Ada\"}");
        assertThat(noServers.stderr()).as("its key carries no tool version: the key of the same code with no servers")
                .contains("cache hit");

        var items = here.run("run", "items.ts", "--db", db.toString());

        assertThat(items.exitCode()).as(items.toString()).isZero();
        assertThat(json(items).get("account").textValue()).isEqualTo("ann");
        assertThat(items.stderr()).as("the lab's stderr went to the log").doesNotContain("lab server ready")
                .doesNotContain("noisy");
        assertThat(project.resolve("noisy-started")).as("only the server the code names was started").doesNotExist();
        assertThat(Files.readString(log)).contains("acct: lab server ready");

        var shown = here.run("run", "items.ts", "--db", db.toString(), "--server-logs");

        assertThat(shown.exitCode()).as(shown.toString()).isZero();
        assertThat(shown.stderr()).as("asked for: the lab's stderr here").contains("acct: lab server ready");
    }

    @Test
    void twoProjectsWhoseServerHasOtherCredentialsGetTheirOwnAnswersFromOneCacheFile() throws Exception {
        CliProcess alice = new CliProcess(project("a", "alice", "alice-token-5f1c9e2b7d4a"));
        CliProcess bob = new CliProcess(project("b", "bob", "bob-token-83e0a61c2f95"));

        var alicesRun = alice.run("run", "items.ts", "--db", db.toString());
        var bobsRun = bob.run("run", "items.ts", "--db", db.toString());
        var alicesAgain = alice.run("run", "items.ts", "--db", db.toString());

        assertThat(alicesRun.exitCode()).as(alicesRun.toString()).isZero();
        assertThat(json(alicesRun).get("account").textValue()).isEqualTo("alice");
        assertThat(bobsRun.exitCode()).as(bobsRun.toString()).isZero();
        assertThat(json(bobsRun).get("account").textValue()).as(CliProcess.mode()).isEqualTo("bob");
        assertThat(bobsRun.stderr()).contains("cache miss");
        assertThat(alicesAgain.stdout()).isEqualTo(alicesRun.stdout());
        assertThat(alicesAgain.stderr()).contains("cache hit");
        assertThat(alicesRun.stderr() + bobsRun.stderr() + alicesAgain.stderr())
                .doesNotContain("alice-token-5f1c9e2b7d4a").doesNotContain("bob-token-83e0a61c2f95");
    }

    @Test
    void controlCharactersFromTheCodeAreShownEscapedLiveAndFromTheCacheButKeptExactInJson() throws Exception {
        Files.writeString(dir.resolve("terminal.ts"), """
                console.log('copy \\u001b]52;c;SGVsbG8=\\u0007 clear \\u001b[2J\\tend');
                return 'hidden \\u001b[8m \\u009b2J';
                """);
        Files.writeString(dir.resolve("terminal-fails.ts"), "throw new Error('bad \\u001b[2J \\u001b]0;title\\u0007')");

        var live = cli.run("run", "terminal.ts", "--db", db.toString());
        var replayed = cli.run("run", "terminal.ts", "--db", db.toString());
        var failed = cli.run("run", "terminal-fails.ts", "--db", db.toString());
        var json = cli.run("run", "terminal.ts", "--db", db.toString(), "--json");

        for (CliProcess.Result result : List.of(live, replayed, failed)) {
            assertThat(result.stdout() + result.stderr()).as(result.toString())
                    .doesNotContain("\u001b").doesNotContain("\u0007").doesNotContain("\u009b");
        }
        assertThat(live.stderr()).contains("copy \\x1b]52;c;SGVsbG8=\\x07 clear \\x1b[2J\tend").contains("cache miss");
        assertThat(replayed.stderr()).contains("copy \\x1b]52;c;SGVsbG8=\\x07 clear \\x1b[2J\tend").contains("cache hit");
        assertThat(Json.MAPPER.readTree(replayed.stdout())).isEqualTo(Json.MAPPER.readTree("\"hidden \\u001b[8m \\u009b2J\""));
        assertThat(failed.stderr()).contains("bad \\x1b[2J \\x1b]0;title\\x07");
        assertThat(json(json).get("console").asText()).isEqualTo("copy \u001b]52;c;SGVsbG8=\u0007 clear \u001b[2J\tend\n");
        assertThat(json(json).get("result").asText()).isEqualTo("hidden \u001b[8m \u009b2J");
    }

    @Test
    void relativePathsReadFromTheDirectoryTheCommandRanInWhenAllowed() throws Exception {
        Files.writeString(dir.resolve("notes.txt"), "from the working directory");
        Files.writeString(dir.resolve("relative.ts"), "return Deno.readTextFileSync('notes.txt');");

        var allowed = cli.run("run", "relative.ts", "--db", db.toString(), "--allow-read", ".");
        var denied = cli.run("run", "relative.ts", "--db", db.toString());

        assertThat(allowed.exitCode()).as(allowed.toString()).isZero();
        assertThat(allowed.stdout().trim()).isEqualTo("\"from the working directory\"");
        assertThat(denied.exitCode()).as(denied.toString()).isEqualTo(1);
        assertThat(denied.stderr()).contains("PermissionError").contains("notes.txt")
                .contains("execache's --allow-read").doesNotContain("run again with");
    }

    @Test
    void contextKeyOrderDoesNotMatter() throws Exception {
        cli.run("run", "shape.ts", "--db", db.toString(), "--context", "{\"items\":[1,2],\"user\":\"ada\"}");

        var reordered = cli.run("run", "shape.ts", "--db", db.toString(), "--json",
                "--context", "{ \"user\" : \"ada\", \"items\" : [1.0, 2] }");

        assertThat(json(reordered).get("cache").asText()).as(reordered.toString()).isEqualTo("hit");
    }

    @Test
    void codeFromStandardInput() throws Exception {
        var result = cli.runWithInput("return context.n * 2;", "run", "-", "--db", db.toString(), "--context", "{\"n\":21}");

        assertThat(result.stdout().trim()).as(result.toString()).isEqualTo("42");
    }

    @Test
    void noCacheFlagAndEnvironmentNeverReadOrStoreAResultAndOnlyCountTheBypass() throws Exception {
        var flag = cli.run("run", "shape.ts", "--db", db.toString(), "--no-cache", "--context", "{\"items\":[1]}");
        assertThat(flag.exitCode()).as(flag.toString()).isZero();
        assertThat(db).as("no-cache must not create the store").doesNotExist();

        cli.run("run", "shape.ts", "--db", db.toString(), "--context", "{\"items\":[1]}");
        var env = new CliProcess(dir).env("EXECACHE_NO_CACHE", "1")
                .run("run", "shape.ts", "--db", db.toString(), "--json", "--context", "{\"items\":[1]}");

        assertThat(json(env).get("cache").asText()).as(env.toString()).isEqualTo("bypass");
        JsonNode figures = json(cli.run("stats", "--db", db.toString(), "--json"));
        assertThat(figures.get("bypassed").asLong()).isEqualTo(1);
        assertThat(figures.get("hits").asLong() + figures.get("misses").asLong()).as("not looked up").isEqualTo(1);
        assertThat(figures.get("entries").asLong()).isEqualTo(1);
    }

    @Test
    void codeErrorsExitOneAndAreNotCached() throws Exception {
        var first = cli.run("run", "fails.ts", "--db", db.toString(), "--context", "{\"repo\":\"x\"}");
        var second = cli.run("run", "fails.ts", "--db", db.toString(), "--json", "--context", "{\"repo\":\"x\"}");

        assertThat(first.exitCode()).as(first.toString()).isEqualTo(1);
        assertThat(first.stderr()).as("what the code threw, as JavaScript says it")
                .contains("execache: Error: no such repo: x (line ").doesNotContain("RuntimeError");
        assertThat(second.exitCode()).isEqualTo(1);
        JsonNode outcome = json(second);
        assertThat(outcome.get("cache").asText()).isEqualTo("miss");
        assertThat(outcome.get("error").get("type").asText()).isEqualTo("RuntimeError");
        assertThat(outcome.get("result").isNull()).isTrue();
    }

    @Test
    void badInputExitsTwoAndLeavesTheStoreUntouched() throws Exception {
        cli.run("run", "shape.ts", "--db", db.toString(), "--context", "{\"items\":[1]}");
        byte[] before = Files.readAllBytes(db);

        var badJson = cli.run("run", "shape.ts", "--db", db.toString(), "--context", "{\"items\":");
        var missing = cli.run("run", "nope.ts", "--db", db.toString());
        var badStore = cli.run("run", "shape.ts", "--db", db.toString(), "--store", "mongo");
        var badTtl = cli.run("run", "shape.ts", "--db", db.toString(), "--ttl", "1 fortnight");
        Files.writeString(dir.resolve("execache.yaml"), "code_execution:\n  cache:\n    ttl: 5\n");
        var badConfig = cli.run("run", "shape.ts", "--db", db.toString(), "--context", "{\"items\":[1]}");

        assertThat(badJson.exitCode()).isEqualTo(2);
        assertThat(badJson.stderr()).contains("--context: not valid JSON");
        assertThat(missing.exitCode()).isEqualTo(2);
        assertThat(missing.stderr()).contains("nope.ts does not exist");
        assertThat(badStore.exitCode()).isEqualTo(2);
        assertThat(badStore.stderr()).contains("unknown store 'mongo'");
        assertThat(badTtl.exitCode()).isEqualTo(2);
        assertThat(badTtl.stderr()).contains("--ttl: '1 fortnight' is not a duration");
        assertThat(badConfig.exitCode()).isEqualTo(2);
        assertThat(badConfig.stderr()).contains("unknown key 'code_execution.cache.ttl'");
        assertThat(Files.readAllBytes(db)).isEqualTo(before);
    }

    @Test
    void toolVersionChangeInvalidatesOnSqlite() throws Exception {
        assertToolVersionChangeInvalidates("--db", db.toString());
    }

    @Test
    void toolVersionChangeInvalidatesOnRedis() throws Exception {
        try (RedisServerProcess redis = RedisServerProcess.start()) {
            assertToolVersionChangeInvalidates("--store", "redis", "--redis-url", redis.url());
        }
    }

    private void assertToolVersionChangeInvalidates(String... store) throws Exception {
        String[] v1 = concat(store, "run", "shape.ts", "--json", "--tool", "github=v1", "--context", "{\"items\":[5]}");
        String[] v2 = concat(store, "run", "shape.ts", "--json", "--tool", "github=v2", "--context", "{\"items\":[5]}");

        var miss = cli.run(v1);
        var hit = cli.run(v1);
        var changed = cli.run(v2);
        var again = cli.run(v2);

        assertThat(json(miss).get("cache").asText()).as(miss.toString()).isEqualTo("miss");
        assertThat(json(hit).get("cache").asText()).as(hit.toString()).isEqualTo("hit");
        assertThat(json(changed).get("cache").asText()).as(changed.toString()).isEqualTo("miss");
        assertThat(changed.stderr()).contains("tool github changed (v1 -> v2): removed 1 entry");
        assertThat(json(again).get("cache").asText()).isEqualTo("hit");
    }

    @Test
    void twoProjectsWithDifferentVersionsOfAToolShareOneCacheFileWithoutInvalidatingEachOther() throws Exception {
        Path one = Files.createDirectories(dir.resolve("one"));
        Path two = Files.createDirectories(dir.resolve("two"));
        Files.writeString(one.resolve("execache.yaml"), "tools:\n  github: v1\n");
        Files.writeString(two.resolve("execache.yaml"), "tools:\n  github: v2\n");
        for (Path project : List.of(one, two)) {
            Files.copy(dir.resolve("shape.ts"), project.resolve("shape.ts"));
        }
        String[] run = {"run", "shape.ts", "--db", db.toString(), "--json", "--tool", "github",
                "--context", "{\"items\":[7]}"};

        for (int round = 0; round < 3; round++) {
            for (Path project : List.of(one, two)) {
                var result = new CliProcess(project).run(run);

                assertThat(result.exitCode()).as(result.toString()).isZero();
                assertThat(json(result).get("cache").asText()).as("round %d in %s: %s", round, project.getFileName(), result)
                        .isEqualTo(round == 0 ? "miss" : "hit");
                assertThat(result.stderr()).as(result.toString()).doesNotContain("removed").doesNotContain("changed");
            }
        }
        var stats = json(cli.run("stats", "--db", db.toString(), "--json"));
        assertThat(stats.get("hits").asLong()).isEqualTo(4);
        assertThat(stats.get("invalidations").asLong()).isZero();

        Files.writeString(one.resolve("execache.yaml"), "tools:\n  github: v3\n");
        var upgraded = new CliProcess(one).run(run);
        var other = new CliProcess(two).run(run);

        assertThat(upgraded.stderr()).as(upgraded.toString()).contains("tool github changed (v1 -> v3): removed 1 entry");
        assertThat(json(other).get("cache").asText()).as("made with v2, which project two still uses: %s", other)
                .isEqualTo("hit");
    }

    @Test
    void missOnOneProcessIsAHitForAnotherOnRedis() throws Exception {
        try (RedisServerProcess redis = RedisServerProcess.start()) {
            var first = cli.run("run", "shape.ts", "--store", "redis", "--redis-url", redis.url(), "--json",
                    "--context", "{\"items\":[2]}");
            var second = new CliProcess(dir).env("EXECACHE_STORE", "redis").env("EXECACHE_REDIS_URL", redis.url())
                    .run("run", "shape.ts", "--json", "--context", "{\"items\":[2]}");

            assertThat(json(first).get("cache").asText()).as(first.toString()).isEqualTo("miss");
            assertThat(json(second).get("cache").asText()).as(second.toString()).isEqualTo("hit");
        }
    }

    @Test
    void statsCountHitsMissesAndEntries() throws Exception {
        // a hit saves what its run took less what finding it took: a run of a second and more saves time however
        // busy the machine (a run of a few milliseconds may save nothing there)
        Files.writeString(dir.resolve("slow.ts"), """
                await new Promise((resolve) => setTimeout(resolve, 1000));
                return context.items.length;
                """);
        cli.run("run", "slow.ts", "--db", db.toString(), "--context", "{\"items\":[1]}");
        cli.run("run", "slow.ts", "--db", db.toString(), "--context", "{\"items\":[1]}");
        cli.run("run", "slow.ts", "--db", db.toString(), "--context", "{\"items\":[1]}");
        cli.run("run", "slow.ts", "--db", db.toString(), "--context", "{\"items\":[2]}");

        var stats = cli.run("stats", "--db", db.toString(), "--json");
        var table = cli.run("stats", "--db", db.toString());

        JsonNode figures = json(stats);
        assertThat(figures.get("hits").asLong()).as(stats.toString()).isEqualTo(2);
        assertThat(figures.get("misses").asLong()).isEqualTo(2);
        assertThat(figures.get("hitRate").asDouble()).isEqualTo(0.5);
        assertThat(figures.get("entries").asLong()).isEqualTo(2);
        assertThat(figures.get("totalSavedMs").asDouble()).isPositive();
        assertThat(table.stdout()).contains("hit rate         50.0%");
    }

    @Test
    void inspectInvalidateAndClear() throws Exception {
        var run = cli.run("run", "shape.ts", "--db", db.toString(), "--json", "--tool", "github=v1",
                "--context", "{\"items\":[1]}");
        String key = json(run).get("key").asText();

        var byKey = cli.run("inspect", key, "--db", db.toString(), "--json");
        var byFile = cli.run("inspect", "--file", "shape.ts", "--db", db.toString(), "--tool", "github=v1",
                "--context", "{\"items\":[1]}");
        var invalidate = cli.run("invalidate", "--tool", "github", "--db", db.toString());
        var gone = cli.run("inspect", key, "--db", db.toString());
        cli.run("run", "shape.ts", "--db", db.toString(), "--context", "{\"items\":[3]}");
        var clear = cli.run("clear", "--db", db.toString());

        assertThat(json(byKey).get("hits").asLong()).as(byKey.toString()).isZero();
        assertThat(json(byKey).get("tools").get("github").asText()).isEqualTo("v1");
        assertThat(byFile.stdout()).as(byFile.toString()).contains(key).contains("ttl left");
        assertThat(invalidate.stdout()).isEqualTo("removed 1 entry that depended on github\n");
        assertThat(gone.exitCode()).isEqualTo(1);
        assertThat(gone.stderr()).startsWith("execache: not cached: ");
        assertThat(clear.stdout()).isEqualTo("removed 1 entry\n");
    }

    @Test
    void unreachableRedisRunsUncachedUnlessTheStoreIsRequired() throws Exception {
        var lenient = cli.run("run", "shape.ts", "--store", "redis", "--redis-url", "redis://127.0.0.1:1",
                "--context", "{\"items\":[1]}");
        var strict = cli.run("run", "shape.ts", "--store", "redis", "--redis-url", "redis://127.0.0.1:1",
                "--require-store", "--context", "{\"items\":[1]}");

        assertThat(lenient.exitCode()).as(lenient.toString()).isZero();
        assertThat(lenient.stdout().trim()).isEqualTo("{\"total\":1}");
        assertThat(lenient.stderr()).contains("warning: cache store cannot be reached").contains("cannot reach Redis");
        assertThat(strict.exitCode()).as(strict.toString()).isEqualTo(3);
        assertThat(strict.stdout()).isEmpty();
    }

    private static String[] concat(String[] first, String... rest) {
        String[] all = new String[first.length + rest.length];
        System.arraycopy(rest, 0, all, 0, rest.length);
        System.arraycopy(first, 0, all, rest.length, first.length);
        return all;
    }
}
