package dev.execache.cli;

import dev.execache.gateway.Downstream;
import dev.execache.gateway.Json;
import dev.execache.cli.output.Output;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.store.redis.RedisServerProcess;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.TextContent;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.redisson.Redisson;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;

/**
 * Whose answer, through the packaged {@code execache serve}: two projects that configure the same
 * server {@code acct} with other credentials, on one SQLite file and on one Redis, each get their
 * own answers, directly and through code; identical configurations and {@code share: public}
 * share; no credential reaches the store or stderr.
 */
class AnswerIdentityIT {
    private static final String ALICE_TOKEN = "alice-token-5f1c9e2b7d4a";
    private static final String BOB_TOKEN = "bob-token-83e0a61c2f95";
    private static final String SIGNING_KEY = "fleet-key-0123456789abcdef";
    private static final String CODE = "return await tools.acct.private_items({})";
    private static RedisServerProcess redis;

    @TempDir
    Path dir;

    @BeforeAll
    static void startRedis() throws IOException {
        redis = RedisServerProcess.start();
    }

    @AfterAll
    static void stopRedis() {
        redis.close();
    }

    /** A project of its own whose {@code acct} server is the lab server run as {@code account}. */
    private Path project(String name, String account, String token, String share) throws IOException {
        Path project = Files.createDirectories(dir.resolve(name));
        return Files.writeString(project.resolve("execache.yaml"), """
                servers:
                  acct:
                    command: node
                    args: ["%s"]
                    cache: true  # a local server's reads are asked every time unless it says to cache them
                    env: {LAB_ACCOUNT: %s, LAB_TOKEN: %s}
                    share: %s
                """.formatted(Downstream.nodeModules().resolveSibling("lab-server.mjs"), account, token, share));
    }

    private static JsonNode answer(CallToolResult result) throws IOException {
        return Json.MAPPER.readTree(((TextContent) result.content().get(0)).text());
    }

    private static JsonNode run(ServeProcess serve) {
        JsonNode outcome = Json.MAPPER.valueToTree(serve.call("execute_code", Map.of("code", CODE)).structuredContent());
        assertThat(outcome.path("error").isMissingNode() || outcome.path("error").isNull()).as("the run: " + outcome)
                .isTrue();
        return outcome;
    }

    /** A's and B's answers, directly and through code, each instance asked twice in turns. */
    private static void assertEachGetsItsOwn(ServeProcess alice, ServeProcess bob) throws IOException {
        assertThat(answer(alice.call("acct__private_items", Map.of())).get("account").textValue()).isEqualTo("alice");
        assertThat(answer(bob.call("acct__private_items", Map.of())).get("account").textValue()).isEqualTo("bob");
        JsonNode aliceAgain = answer(alice.call("acct__private_items", Map.of()));
        assertThat(aliceAgain.get("account").textValue()).isEqualTo("alice");
        assertThat(aliceAgain.get("served").intValue()).as("alice's own answer, cached").isEqualTo(1);

        JsonNode alicesRun = run(alice);
        JsonNode bobsRun = run(bob);
        assertThat(alicesRun.at("/result/account").textValue()).isEqualTo("alice");
        assertThat(bobsRun.at("/result/account").textValue()).isEqualTo("bob");
        assertThat(bobsRun.get("cache").textValue()).as("bob's run is no hit of alice's").isEqualTo("miss");
        assertThat(run(alice).get("cache").textValue()).isEqualTo("hit");
        assertThat(run(bob).at("/result/account").textValue()).isEqualTo("bob");
    }

    private static void assertNoCredentialIn(String what, String text) {
        assertThat(text).as(what).doesNotContain(ALICE_TOKEN).doesNotContain(BOB_TOKEN);
    }

    @Test
    void twoServeInstancesWithOtherCredentialsOnOneSqliteFileGetTheirOwnAnswers() throws Exception {
        Path db = dir.resolve("cache.db");
        Path alicesConfig = project("a", "alice", ALICE_TOKEN, "private");
        Path bobsConfig = project("b", "bob", BOB_TOKEN, "private");
        try (ServeProcess alice = ServeProcess.start("--store", "sqlite", "--db", db.toString(), "--config",
                alicesConfig.toString());
                ServeProcess bob = ServeProcess.start("--store", "sqlite", "--db", db.toString(), "--config",
                        bobsConfig.toString())) {
            assertEachGetsItsOwn(alice, bob);

            StringBuilder stored = new StringBuilder();
            try (Stream<Path> files = Files.list(dir)) {
                for (Path file : files.filter(path -> path.getFileName().toString().startsWith("cache.db")).toList()) {
                    stored.append(new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1));
                }
            }
            assertThat(stored.toString()).contains("acct__private_items");
            assertNoCredentialIn("the SQLite file", stored.toString());
            assertNoCredentialIn("stderr", String.join("\n", alice.stderr()) + String.join("\n", bob.stderr()));
        }
    }

    @Test
    void twoServeInstancesWithOtherCredentialsOnOneSignedRedisGetTheirOwnAnswers() throws Exception {
        String url = redis.url() + "/9";
        Map<String, String> fleet = Map.of("EXECACHE_SIGNING_KEY", SIGNING_KEY);
        Path alicesConfig = project("a", "alice", ALICE_TOKEN, "private");
        Path bobsConfig = project("b", "bob", BOB_TOKEN, "private");
        try (ServeProcess alice = ServeProcess.start(fleet, "--store", "redis", "--redis-url", url, "--config",
                alicesConfig.toString());
                ServeProcess bob = ServeProcess.start(fleet, "--store", "redis", "--redis-url", url, "--config",
                        bobsConfig.toString())) {
            assertEachGetsItsOwn(alice, bob);

            String stored = String.join("\n", everythingIn(url));
            assertThat(stored).contains("acct__private_items");
            assertNoCredentialIn("Redis", stored);
            assertNoCredentialIn("stderr", String.join("\n", alice.stderr()) + String.join("\n", bob.stderr()));
        }
    }

    @Test
    void identicalConfigurationsShareOnOneSignedRedisDirectlyAndThroughCode() throws Exception {
        String url = redis.url() + "/10";
        Map<String, String> fleet = Map.of("EXECACHE_SIGNING_KEY", SIGNING_KEY);
        Path config = project("a", "alice", ALICE_TOKEN, "private");
        try (ServeProcess one = ServeProcess.start(fleet, "--store", "redis", "--redis-url", url, "--config",
                config.toString());
                ServeProcess two = ServeProcess.start(fleet, "--store", "redis", "--redis-url", url, "--config",
                        config.toString())) {
            JsonNode fromOne = answer(one.call("acct__private_items", Map.of()));
            JsonNode fromTwo = answer(two.call("acct__private_items", Map.of()));
            JsonNode runOfOne = run(one);
            JsonNode runOfTwo = run(two);

            assertThat(fromTwo).as("instance one's answer, pid and all").isEqualTo(fromOne);
            assertThat(runOfTwo.get("cache").textValue()).isEqualTo("hit");
            assertThat(runOfTwo.get("result")).isEqualTo(runOfOne.get("result"));
        }
    }

    @Test
    void aServerSharedPubliclySharesAcrossCredentials() throws Exception {
        String url = redis.url() + "/11";
        Path alicesConfig = project("a", "alice", ALICE_TOKEN, "public");
        Path bobsConfig = project("b", "bob", BOB_TOKEN, "public");
        try (ServeProcess alice = ServeProcess.start("--store", "redis", "--redis-url", url, "--config",
                alicesConfig.toString());
                ServeProcess bob = ServeProcess.start("--store", "redis", "--redis-url", url, "--config",
                        bobsConfig.toString())) {
            answer(alice.call("acct__private_items", Map.of()));
            run(alice);

            assertThat(answer(bob.call("acct__private_items", Map.of())).get("account").textValue()).isEqualTo("alice");
            assertThat(run(bob).get("cache").textValue()).isEqualTo("hit");
        }
    }

    /** Every key in the database and every string held under it. */
    private static List<String> everythingIn(String url) {
        Config config = new Config();
        config.useSingleServer().setAddress(url.substring(0, url.lastIndexOf('/')))
                .setDatabase(Integer.parseInt(url.substring(url.lastIndexOf('/') + 1)));
        RedissonClient client = Redisson.create(config);
        try {
            List<Object> all = client.getScript(StringCodec.INSTANCE).eval(RScript.Mode.READ_ONLY, """
                    local out = {}
                    for _, key in ipairs(redis.call('KEYS', '*')) do
                      table.insert(out, key)
                      local kind = redis.call('TYPE', key).ok
                      local values = {}
                      if kind == 'string' then values = {redis.call('GET', key)}
                      elseif kind == 'hash' then values = redis.call('HGETALL', key)
                      elseif kind == 'zset' then values = redis.call('ZRANGE', key, 0, -1)
                      elseif kind == 'set' then values = redis.call('SMEMBERS', key)
                      elseif kind == 'list' then values = redis.call('LRANGE', key, 0, -1) end
                      for _, value in ipairs(values) do table.insert(out, value) end
                    end
                    return out
                    """, RScript.ReturnType.LIST, List.of());
            List<String> strings = new ArrayList<>();
            all.forEach(value -> strings.add(String.valueOf(value)));
            return strings;
        } finally {
            client.shutdown();
        }
    }
}
