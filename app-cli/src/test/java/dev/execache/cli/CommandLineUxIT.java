package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.cli.output.Output;
import dev.execache.gateway.Json;
import dev.execache.store.redis.RedisServerProcess;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The command line as a person meets it (issue 16), through the launcher script: inputs and
 * their errors, config discovery, what is cached, quiet output, help and completion.
 */
class CommandLineUxIT {
    @TempDir
    Path dir;

    private CliProcess cli;
    private Path db;

    @BeforeEach
    void setUp() throws IOException {
        cli = new CliProcess(dir);
        db = dir.resolve("cache.db");
        Files.writeString(dir.resolve("double.ts"), "return context.n * 2;\n");
        Files.writeString(dir.resolve("noisy.ts"), "console.log('from the code'); return 1;\n");
    }

    private static JsonNode json(CliProcess.Result result) throws IOException {
        return Json.MAPPER.readTree(result.stdout());
    }

    @Test
    void worksThroughASymbolicLinkWithABareEnvironment() throws Exception {
        Path bin = Files.createDirectories(dir.resolve("bin"));
        Path link = Files.createSymbolicLink(bin.resolve("execache"), CliProcess.launcher());
        Path home = Files.createDirectories(dir.resolve("home"));
        CliProcess bare = new CliProcess(dir).through(link).minimalEnvironment(home)
                .env("EXECACHE_DENO", CliProcess.deno().toString());

        var run = bare.runWithInput("{\"n\":21}", "run", "double.ts", "--db", db.toString(), "--context", "@-");
        var doctor = bare.run("doctor", "--db", db.toString());

        assertThat(run.exitCode()).as(run.toString()).isZero();
        assertThat(run.stdout()).isEqualTo("42\n");
        assertThat(run.stderr()).contains("cache miss");
        assertThat(doctor.exitCode()).as(doctor.toString()).isZero();
        assertThat(doctor.stdout()).contains("ok   java").contains("ok   deno").contains("ok   store")
                .contains("ok   logs    the stderr of the servers a run starts: "
                        + home.resolve(".local/state/execache/servers.log"));
        assertThat(home.resolve(".cache/execache/cache.db")).as("nothing in the user's default cache").doesNotExist();
    }

    @Test
    void aScriptWithAShebangLineRunsAndIsListedByItsFileName() throws Exception {
        Files.writeString(dir.resolve("tool.ts"), "#!/usr/bin/env -S execache run\nreturn context.n + 1;\n");

        var run = cli.run("run", "tool.ts", "--db", db.toString(), "--context", "{\"n\":1}");
        var list = cli.run("list", "--db", db.toString(), "--json");

        assertThat(run.exitCode()).as(run.toString()).isZero();
        assertThat(run.stdout()).isEqualTo("2\n");
        assertThat(json(list).get(0).get("label").asText()).as(list.toString()).isEqualTo("tool.ts");
    }

    @Test
    void codeFromStandardInputIsLabelledByItsFirstLine() throws Exception {
        var run = cli.runWithInput("// count the things\nreturn 3;", "run", "-", "--db", db.toString());
        var list = cli.run("list", "--db", db.toString());

        assertThat(run.stdout()).as(run.toString()).isEqualTo("3\n");
        assertThat(list.stdout()).contains("// count the things");
    }

    @Test
    void everyBadValueIsExitTwoWithOneLineNamingTheOptionAndTheCacheStaysByteIdentical() throws Exception {
        cli.run("run", "double.ts", "--db", db.toString(), "--context", "{\"n\":1}");
        byte[] before = Files.readAllBytes(db);
        Files.writeString(dir.resolve("blank.ts"), "  \n\n");
        Files.write(dir.resolve("latin1.ts"), "return 'caf\u00e9';".getBytes(StandardCharsets.ISO_8859_1));
        String dbPath = db.toString();
        record Case(String option, byte[] stdin, List<String> env, String... args) {
        }
        List<Case> cases = List.of(
                new Case("--context", null, List.of(), "run", "double.ts", "--db", dbPath, "--context", "[1,2]"),
                new Case("--context", null, List.of(), "run", "double.ts", "--db", dbPath, "--context", "42"),
                new Case("--context", null, List.of(), "run", "double.ts", "--db", dbPath, "--context", "{\"n\":"),
                new Case("FILE", null, List.of(), "run", "blank.ts", "--db", dbPath),
                new Case("FILE", null, List.of(), "run", "latin1.ts", "--db", dbPath),
                new Case("FILE", new byte[] {(byte) 0xff, (byte) 0xfe, 'x'}, List.of(), "run", "-", "--db", dbPath),
                new Case("--context", "{\"n\":1}".getBytes(StandardCharsets.UTF_8), List.of(),
                        "run", "-", "--db", dbPath, "--context", "@-"),
                new Case("--timeout", null, List.of(), "run", "double.ts", "--db", dbPath, "--timeout", "999999999999d"),
                new Case("--ttl", null, List.of(), "run", "double.ts", "--db", dbPath, "--ttl", "0s"),
                new Case("--db", null, List.of(), "run", "double.ts", "--db", ""),
                new Case("--redis-url", null, List.of(), "run", "double.ts", "--store", "redis",
                        "--redis-url", "redis://127.0.0.1:99999"),
                new Case("EXECACHE_SQLITE_PATH", null, List.of("EXECACHE_SQLITE_PATH", ""), "run", "double.ts"),
                new Case("--store memory", null, List.of(), "stats", "--store", "memory"),
                new Case("--store memory", null, List.of(), "list", "--store", "memory"),
                new Case("EXECACHE_STORE=memory", null, List.of("EXECACHE_STORE", "memory"), "clear", "--db", dbPath),
                new Case("--context", null, List.of(), "inspect", "v1:x", "--db", dbPath, "--context", "{}"),
                new Case("--older-than", null, List.of(), "prune", "--db", dbPath, "--older-than", "soon"),
                new Case("--memory-mb", null, List.of(), "inspect", "v1:x", "--db", dbPath, "--memory-mb", "64"),
                new Case("shell", null, List.of(), "completion", "tcsh"));

        List<String> failures = new ArrayList<>();
        for (Case bad : cases) {
            CliProcess process = new CliProcess(dir);
            for (int i = 0; i < bad.env().size(); i += 2) {
                process.env(bad.env().get(i), bad.env().get(i + 1));
            }
            var result = process.runWithInput(bad.stdin(), bad.args());
            String line = result.stderr().strip();
            boolean ok = result.exitCode() == 2 && result.stdout().isEmpty() && !line.contains("\n")
                    && line.startsWith("execache: ") && line.toLowerCase().contains(bad.option().toLowerCase())
                    && !line.contains("Exception") && !line.contains("dev.execache");
            if (!ok) {
                failures.add(String.join(" ", bad.args()) + " -> " + result);
            }
            assertThat(Files.readAllBytes(db)).as("after " + String.join(" ", bad.args())).isEqualTo(before);
        }
        assertThat(failures).isEmpty();
    }

    @Test
    void theConfigIsFoundInAParentDirectoryAndConfigSaysWhereEachSettingCameFrom() throws Exception {
        Files.writeString(dir.resolve("execache.yaml"), """
                code_execution:
                  cache:
                    sqlite_path: project-cache.db
                    ttl_seconds: 120
                tools:
                  github: v1
                """);
        Path sub = Files.createDirectories(dir.resolve("src/deep"));
        Files.writeString(sub.resolve("gh.ts"), "return 'listed';");
        CliProcess inSub = new CliProcess(sub);

        var run = inSub.run("run", "gh.ts", "--tool", "github", "--json");
        var config = inSub.run("config", "--timeout", "10s");
        var configJson = inSub.run("config", "--json");

        assertThat(run.exitCode()).as(run.toString()).isZero();
        assertThat(json(run).get("cache").asText()).isEqualTo("miss");
        assertThat(dir.resolve("project-cache.db")).as("sqlite_path is relative to the config file").exists();
        assertThat(config.stdout()).as(config.toString())
                .contains(dir.resolve("execache.yaml").toString())
                .contains("found in a parent of the working directory")
                .containsPattern("ttl +2m +\\[config ")
                .containsPattern("timeout +10s +\\[flag --timeout\\]")
                .containsPattern("max_entries +100 +\\[default\\]")
                .contains("github=v1");
        assertThat(json(configJson).get("sqlite_path").get("value").asText())
                .isEqualTo(dir.resolve("project-cache.db").toString());
    }

    @Test
    void theUsersConfigIsUsedWhenNoProjectHasOneAndTheEnvironmentWinsOverBoth() throws Exception {
        Path configHome = Files.createDirectories(dir.resolve("xdg/execache"));
        Files.writeString(configHome.resolve("config.yaml"), "tools:\n  jira: v7\n");
        Path elsewhere = Files.createDirectories(dir.resolve("elsewhere"));
        Files.writeString(elsewhere.resolve("named.yaml"), "tools:\n  sql: v3\n");

        var user = new CliProcess(dir).env("XDG_CONFIG_HOME", dir.resolve("xdg").toString()).run("config");
        var named = new CliProcess(dir).env("XDG_CONFIG_HOME", dir.resolve("xdg").toString())
                .env("EXECACHE_CONFIG", elsewhere.resolve("named.yaml").toString()).run("config");

        assertThat(user.stdout()).as(user.toString()).contains("jira=v7").contains("the user's config");
        assertThat(named.stdout()).as(named.toString()).contains("sql=v3").contains("env EXECACHE_CONFIG")
                .doesNotContain("jira");
    }

    @Test
    void listShowsEntriesNewestFirstAndInspectAndPruneWorkOnThem() throws Exception {
        cli.run("run", "double.ts", "--db", db.toString(), "--context", "{\"n\":1}", "--tool", "github=v2");
        var second = cli.run("run", "noisy.ts", "--db", db.toString(), "--json");
        String key = json(second).get("key").asText();
        cli.run("run", "noisy.ts", "--db", db.toString());

        var table = cli.run("list", "--db", db.toString());
        var listed = json(cli.run("list", "--db", db.toString(), "--json"));
        var inspect = cli.run("inspect", key, "--db", db.toString());
        var inspectJson = json(cli.run("inspect", key, "--db", db.toString(), "--json"));
        var missing = cli.run("inspect", "v1:nosuch", "--db", db.toString());
        var prune = cli.run("prune", "--db", db.toString());
        var pruneOld = cli.run("prune", "--db", db.toString(), "--older-than", "1ms");

        assertThat(table.stdout().lines().findFirst().orElse("")).as(table.toString())
                .contains("KEY").contains("AGE").contains("TTL LEFT").contains("HITS").contains("SIZE")
                .contains("TOOLS").contains("LABEL");
        assertThat(listed).hasSize(2);
        assertThat(listed.get(0).get("label").asText()).isEqualTo("noisy.ts");
        assertThat(listed.get(0).get("hits").asLong()).isEqualTo(1);
        assertThat(listed.get(1).get("label").asText()).isEqualTo("double.ts");
        assertThat(listed.get(1).get("tools").get("github").asText()).isEqualTo("v2");
        assertThat(listed.get(1).get("ttlLeftMs").asLong()).isPositive();
        assertThat(inspect.exitCode()).isZero();
        assertThat(inspect.stdout()).contains("label      noisy.ts").contains("tools      none")
                .doesNotContain("{").doesNotContain("=}");
        assertThat(inspectJson.get("label").asText()).isEqualTo("noisy.ts");
        assertThat(inspectJson.get("console").asText()).isEqualTo("from the code\n");
        assertThat(missing.exitCode()).as(missing.toString()).isEqualTo(1);
        assertThat(missing.stdout()).isEmpty();
        assertThat(missing.stderr()).contains("not cached: v1:nosuch");
        assertThat(prune.stdout()).isEqualTo("removed 0 entries\n");
        assertThat(pruneOld.stdout()).isEqualTo("removed 2 entries\n");
        assertThat(json(cli.run("list", "--db", db.toString(), "--json"))).isEmpty();
    }

    @Test
    void managementCommandsNeverCreateACacheFile() throws Exception {
        Path none = dir.resolve("no-such-cache.db");
        List<String[]> commands = List.of(
                new String[] {"stats", "--db", none.toString()},
                new String[] {"list", "--db", none.toString()},
                new String[] {"prune", "--db", none.toString()},
                new String[] {"clear", "--db", none.toString()},
                new String[] {"invalidate", "--tool", "github", "--db", none.toString()},
                new String[] {"inspect", "v1:x", "--db", none.toString()},
                new String[] {"doctor", "--db", none.toString()},
                new String[] {"config", "--db", none.toString()});

        for (String[] command : commands) {
            var result = cli.run(command);
            // only inspect fails: the entry asked for is not cached
            assertThat(result.exitCode()).as(result.toString()).isEqualTo(command[0].equals("inspect") ? 1 : 0);
            assertThat(none).as(String.join(" ", command)).doesNotExist();
        }
    }

    @Test
    void invalidatingAToolNoOneKnowsWarns() throws Exception {
        cli.run("run", "double.ts", "--db", db.toString(), "--context", "{\"n\":1}", "--tool", "github=v1");

        var unknown = cli.run("invalidate", "--tool", "githib", "--db", db.toString());
        var known = cli.run("invalidate", "--tool", "github", "--db", db.toString());

        assertThat(unknown.exitCode()).isZero();
        assertThat(unknown.stderr()).as(unknown.toString()).contains("warning: no tool 'githib' is known")
                .doesNotContain("?");
        assertThat(known.stdout()).isEqualTo("removed 1 entry that depended on github\n");
        assertThat(known.stderr()).doesNotContain("warning");
    }

    @Test
    void quietSilencesExecachesOwnLinesButNotTheCodesConsole() throws Exception {
        var loud = cli.run("run", "noisy.ts", "--db", db.toString());
        var quiet = cli.run("-q", "run", "noisy.ts", "--db", db.toString());
        var quietAfter = cli.run("run", "noisy.ts", "--db", db.toString(), "--quiet");

        assertThat(loud.stderr()).contains("execache: cache miss");
        assertThat(quiet.exitCode()).as(quiet.toString()).isZero();
        assertThat(quiet.stdout()).isEqualTo("1\n");
        assertThat(quiet.stderr()).isEqualTo("from the code\n");
        assertThat(quietAfter.stderr()).isEqualTo("from the code\n");
    }

    @Test
    void helpForACommandAndShellCompletion() throws Exception {
        var help = cli.run("help", "run");
        var bash = cli.run("completion", "bash");
        var zsh = cli.run("completion", "zsh");
        var fish = cli.run("completion", "fish");

        assertThat(help.exitCode()).as(help.toString()).isZero();
        assertThat(help.stdout()).startsWith("Usage: execache run").contains("--context");
        assertThat(bash.exitCode()).isZero();
        assertThat(bash.stdout()).contains("complete -F").contains("inspect").contains("--older-than");
        assertThat(zsh.stdout()).contains("bashcompinit");
        assertThat(fish.exitCode()).isZero();
        assertThat(fish.stdout()).contains("complete -c execache -n __fish_use_subcommand -a inspect")
                .contains("-l older-than -r");
    }

    @Test
    void aWrongRedisPasswordIsSaidToBeOne() throws Exception {
        try (RedisServerProcess redis = RedisServerProcess.start("--requirepass", "right")) {
            String url = "redis://:not-the-password-4711@127.0.0.1:" + redis.port();
            var run = cli.run("run", "double.ts", "--store", "redis", "--redis-url", url, "--context", "{\"n\":1}");
            var stats = cli.run("stats", "--store", "redis", "--redis-url", url);

            assertThat(run.exitCode()).as(run.toString()).isZero();
            assertThat(run.stderr()).contains("refused the credentials").doesNotContain("not-the-password-4711");
            assertThat(stats.exitCode()).as(stats.toString()).isEqualTo(3);
            assertThat(stats.stderr()).contains("refused the credentials");
        }
    }

    @Test
    void aMissingDenoNamesTheVariableThatSetsIt() throws Exception {
        var run = new CliProcess(dir).env("EXECACHE_DENO", dir.resolve("no-deno").toString())
                .run("run", "double.ts", "--db", db.toString(), "--context", "{\"n\":1}");
        var doctor = new CliProcess(dir).env("EXECACHE_DENO", dir.resolve("no-deno").toString())
                .run("doctor", "--db", db.toString());

        assertThat(run.exitCode()).as(run.toString()).isEqualTo(3);
        assertThat(run.stderr()).contains("EXECACHE_DENO").doesNotContain("DenoSandboxSettings")
                .doesNotContain("Exception");
        assertThat(doctor.exitCode()).as(doctor.toString()).isEqualTo(1);
        assertThat(doctor.stdout()).contains("FAIL deno").contains("fix: point EXECACHE_DENO");
    }
}
