package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.cli.output.Output;
import dev.execache.gateway.Json;
import dev.execache.store.redis.RedisServerProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Signed entries on a real redis-server, from the user's side: the real command line, each
 * command with the keys of its own environment, one process per command.
 */
class SignedEntriesIT {
    static final String KEY = "5f0c1d2e3a4b5c6d7e8f90a1b2c3d4e5";
    static final String OTHER_KEY = "a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4";
    static final String NEW_KEY = "0e1d2c3b4a5968778695a4b3c2d1e0f9";

    @TempDir
    Path dir;

    private RedisServerProcess redis;

    @BeforeEach
    void setUp() throws IOException {
        redis = RedisServerProcess.start();
        Files.writeString(dir.resolve("sum.ts"), """
                console.log("summing", context.items.length, "items");
                return { total: context.items.reduce((a: number, b: number) => a + b, 0) };
                """);
    }

    @AfterEach
    void stopRedis() {
        redis.close();
    }

    /** A command on this test's Redis whose environment holds these variables (name, value, ...) and no others of execache's signing. */
    private CliProcess cli(String... variables) {
        CliProcess cli = new CliProcess(dir);
        for (int i = 0; i < variables.length; i += 2) {
            cli.env(variables[i], variables[i + 1]);
        }
        return cli;
    }

    private CliProcess.Result run(CliProcess cli, String... context) throws Exception {
        var result = cli.run("run", "sum.ts", "--store", "redis", "--redis-url", redis.url(), "--json",
                "--context", context.length == 0 ? "{\"items\":[1,2,3]}" : context[0]);
        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(json(result).get("result").get("total").asInt()).as(result.toString()).isEqualTo(6);
        return result;
    }

    private static String cache(CliProcess.Result result) throws IOException {
        return json(result).get("cache").asText();
    }

    private static JsonNode json(CliProcess.Result result) throws IOException {
        return Json.MAPPER.readTree(result.stdout());
    }

    private JsonNode stats(CliProcess cli) throws Exception {
        var stats = cli.run("stats", "--store", "redis", "--redis-url", redis.url(), "--json");
        assertThat(stats.exitCode()).as(stats.toString()).isZero();
        return Json.MAPPER.readTree(stats.stdout());
    }

    private static List<String> lines(String text, String containing) {
        return Arrays.stream(text.split("\n")).filter(line -> line.contains(containing)).toList();
    }

    @Test
    void runsWithTheSameKeyShareAHitAndNeitherWarnsOfUnsignedEntries() throws Exception {
        var first = run(cli("EXECACHE_SIGNING_KEY", KEY));
        var second = run(cli("EXECACHE_SIGNING_KEY", KEY));

        assertThat(cache(first)).as(first.toString()).isEqualTo("miss");
        assertThat(cache(second)).as(second.toString()).isEqualTo("hit");
        for (var result : List.of(first, second)) {
            assertThat(result.stderr()).as(result.toString()).doesNotContain("not signed").doesNotContain("warning");
        }
    }

    @Test
    void aRunWithAnotherKeyIsNeverServedTheEntryButRunsAgainAndCountsItDamaged() throws Exception {
        var written = run(cli("EXECACHE_SIGNING_KEY", KEY));
        var other = run(cli("EXECACHE_SIGNING_KEY", OTHER_KEY));
        var otherAgain = run(cli("EXECACHE_SIGNING_KEY", OTHER_KEY));

        assertThat(cache(written)).as(written.toString()).isEqualTo("miss");
        assertThat(cache(other)).as("signed with another key: %s", other).isEqualTo("miss");
        assertThat(json(other).get("console").asText()).as("it ran: %s", other).isEqualTo("summing 3 items\n");
        List<String> warnings = lines(other.stderr(), "warning");
        assertThat(warnings).as(other.toString()).hasSize(1);
        assertThat(warnings.get(0))
                .contains(json(written).get("key").asText())
                .contains("a signature none of the fleet's keys made")
                .contains("not served").contains("damaged")
                .doesNotContain(KEY).doesNotContain(OTHER_KEY)
                .doesNotContain(KEY.substring(0, 8)).doesNotContain(OTHER_KEY.substring(0, 8));
        assertThat(cache(otherAgain)).as("what the other key wrote is its hit: %s", otherAgain).isEqualTo("hit");
        assertThat(stats(cli("EXECACHE_SIGNING_KEY", OTHER_KEY)).get("damaged").asLong()).isEqualTo(1);
    }

    @Test
    void anEntryWrittenWithoutAKeyIsNeverServedToAFleetWithOne() throws Exception {
        var unsigned = run(cli());
        var signed = run(cli("EXECACHE_SIGNING_KEY", KEY));

        assertThat(cache(unsigned)).as(unsigned.toString()).isEqualTo("miss");
        assertThat(cache(signed)).as("planted without a signature: %s", signed).isEqualTo("miss");
        assertThat(lines(signed.stderr(), "warning")).as(signed.toString()).singleElement().asString()
                .contains("has no signature").contains("not served");
        assertThat(stats(cli("EXECACHE_SIGNING_KEY", KEY)).get("damaged").asLong()).isEqualTo(1);
    }

    @Test
    void theNewKeyWithTheOldOneStillAcceptedReadsWhatTheOldKeyWroteAndWithoutItDoesNot() throws Exception {
        var old = run(cli("EXECACHE_SIGNING_KEY", KEY));
        var rotating = run(cli("EXECACHE_SIGNING_KEY", NEW_KEY, "EXECACHE_SIGNING_KEY_OLD", KEY));
        var rotated = run(cli("EXECACHE_SIGNING_KEY", NEW_KEY));
        var newOnly = run(cli("EXECACHE_SIGNING_KEY", NEW_KEY));

        assertThat(cache(old)).as(old.toString()).isEqualTo("miss");
        assertThat(cache(rotating)).as("the old key is still accepted: %s", rotating).isEqualTo("hit");
        assertThat(rotating.stderr()).as(rotating.toString()).doesNotContain("warning");
        assertThat(cache(rotated)).as("the old key dropped: %s", rotated).isEqualTo("miss");
        assertThat(lines(rotated.stderr(), "warning")).as(rotated.toString()).singleElement().asString()
                .contains("a signature none of the fleet's keys made");
        assertThat(cache(newOnly)).as(newOnly.toString()).isEqualTo("hit");
    }

    @Test
    void aKeyFileNamedByTheConfigSignsWithItsFirstKeyAndAcceptsTheLaterOnes() throws Exception {
        Path keys = dir.resolve("fleet.key");
        Files.writeString(keys, "# the fleet's keys: the first signs\n" + NEW_KEY + "\n\n" + KEY + "\n");
        Files.writeString(dir.resolve("execache.yaml"), "code_execution:\n  cache:\n    signing_key_file: fleet.key\n");
        var old = run(cli("EXECACHE_SIGNING_KEY", KEY), "{\"items\":[6]}");
        var fromFile = run(cli(), "{\"items\":[6]}");
        var again = run(cli(), "{\"items\":[1,5]}");
        var newKey = run(cli("EXECACHE_SIGNING_KEY", NEW_KEY), "{\"items\":[1,5]}");

        assertThat(cache(old)).as(old.toString()).isEqualTo("miss");
        assertThat(cache(fromFile)).as("the file's second key is accepted: %s", fromFile).isEqualTo("hit");
        assertThat(cache(again)).as(again.toString()).isEqualTo("miss");
        assertThat(cache(newKey)).as("the file's first key signed it: %s", newKey).isEqualTo("hit");
        for (var result : List.of(old, fromFile, again, newKey)) {
            assertThat(result.stderr()).as(result.toString()).doesNotContain("warning");
        }
    }

    @Test
    void withoutAKeyEveryCommandOnRedisWarnsOnceInOneLineThatEntriesAreUnsigned() throws Exception {
        var first = run(cli());
        var second = run(cli());
        var stats = cli().run("stats", "--store", "redis", "--redis-url", redis.url());
        var sqlite = cli().run("run", "sum.ts", "--db", dir.resolve("cache.db").toString(), "--context", "{\"items\":[1]}");

        for (var result : List.of(first, second, stats)) {
            assertThat(lines(result.stderr(), "not signed")).as(result.toString()).singleElement().asString()
                    .startsWith("execache: warning: entries in Redis at " + redis.url())
                    .contains("EXECACHE_SIGNING_KEY or signing_key_file");
        }
        assertThat(sqlite.exitCode()).as(sqlite.toString()).isZero();
        assertThat(sqlite.stderr()).as("SQLite entries are not signed, by design").doesNotContain("not signed");
    }

    @Test
    void theKeyItselfInTheConfigFileIsRefusedNamingTheSettingAndNeverShowingTheKey() throws Exception {
        Files.writeString(dir.resolve("execache.yaml"), "code_execution:\n  cache:\n    signing_key: " + KEY + "\n");

        var refused = cli().run("run", "sum.ts", "--store", "redis", "--redis-url", redis.url(),
                "--context", "{\"items\":[1]}");

        assertThat(refused.exitCode()).as(refused.toString()).isEqualTo(2);
        assertThat(refused.stdout()).isEmpty();
        assertThat(refused.stderr().lines()).as(refused.toString()).singleElement().asString()
                .contains("code_execution.cache.signing_key: the fleet's signing key never goes in the config file")
                .contains("signing_key_file").contains("EXECACHE_SIGNING_KEY")
                .doesNotContain(KEY).doesNotContain(KEY.substring(0, 8));
        Files.delete(dir.resolve("execache.yaml"));
        assertThat(stats(cli("EXECACHE_SIGNING_KEY", KEY)).get("entries").asLong()).as("nothing ran, nothing stored").isZero();
    }

    @Test
    void aMissingOrShortKeyFileIsAUsageErrorNamingTheSettingAndNeverShowingTheKey() throws Exception {
        Files.writeString(dir.resolve("execache.yaml"), "code_execution:\n  cache:\n    signing_key_file: fleet.key\n");
        var missing = cli().run("run", "sum.ts", "--store", "redis", "--redis-url", redis.url(),
                "--context", "{\"items\":[1]}");
        Files.writeString(dir.resolve("fleet.key"), "hunter2-short\n");
        var short_ = cli().run("run", "sum.ts", "--store", "redis", "--redis-url", redis.url(),
                "--context", "{\"items\":[1]}");
        var shortByVariable = cli("EXECACHE_SIGNING_KEY_FILE", "fleet.key").run("stats", "--store", "redis",
                "--redis-url", redis.url());

        assertThat(missing.exitCode()).as(missing.toString()).isEqualTo(2);
        assertThat(missing.stderr().lines()).as(missing.toString()).singleElement().asString()
                .contains("code_execution.cache.signing_key_file in " + dir.resolve("execache.yaml"))
                .contains("cannot read the signing key file " + dir.resolve("fleet.key") + " (no such file)");
        assertThat(short_.exitCode()).as(short_.toString()).isEqualTo(2);
        assertThat(short_.stderr().lines()).as(short_.toString()).singleElement().asString()
                .contains("code_execution.cache.signing_key_file")
                .contains("the signing key has 13 characters; use at least 16")
                .doesNotContain("hunter2");
        assertThat(shortByVariable.exitCode()).as(shortByVariable.toString()).isEqualTo(2);
        assertThat(shortByVariable.stderr().lines()).as(shortByVariable.toString()).singleElement().asString()
                .startsWith("execache: EXECACHE_SIGNING_KEY_FILE: the signing key has 13 characters")
                .doesNotContain("hunter2");
    }
}
