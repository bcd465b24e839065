package dev.execache.cli;

import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import static dev.execache.cli.ServeIT.structured;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.store.redis.RedisServerProcess;
import dev.execache.store.redis.TestRedisCluster;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Several {@code execache serve} processes with {@code --store redis} on one redis-server
 * started here behave as one cache. Each test has a database of its own.
 */
class FleetIT {
    private static RedisServerProcess redis;

    private final List<ServeProcess> fleet = new ArrayList<>();
    private final ExecutorService callers = Executors.newCachedThreadPool();
    /** A test's own Redis Cluster, stopped after its fleet. */
    private TestRedisCluster cluster;

    @BeforeAll
    static void startRedis() throws Exception {
        redis = RedisServerProcess.start();
    }

    @AfterAll
    static void stopRedis() {
        redis.close();
    }

    /** The shared server's database {@code db}: each test has one of its own. */
    private static String url(int db) {
        return redis.url() + "/" + db;
    }

    @AfterEach
    void stopFleet() {
        fleet.forEach(server -> {
            try {
                server.close();
            } catch (RuntimeException e) {
                // already gone
            }
        });
        callers.shutdownNow();
        if (cluster != null) {
            cluster.close();
        }
    }

    private List<ServeProcess> startFleet(int size, String... arguments) {
        List<CompletableFuture<ServeProcess>> starting = IntStream.range(0, size)
                .mapToObj(i -> CompletableFuture.supplyAsync(() -> ServeProcess.start(arguments), callers))
                .toList();
        starting.forEach(server -> fleet.add(server.join()));
        return List.copyOf(fleet);
    }

    /**
     * Script {@code i}: a computation whose answer the test knows, and a nonce drawn when it
     * runs. Answers with the same nonce come from one execution, wherever they were served.
     */
    static String script(int i, int loops) {
        return script(i, loops, 0);
    }

    /** The same, taking at least {@code busyMs} of wall-clock time. */
    static String script(int i, int loops, int busyMs) {
        return """
                const nonce = crypto.randomUUID();
                const until = Date.now() + %d;
                while (Date.now() < until) {}
                let sum = 0;
                for (let k = 0; k < %d; k++) sum += k %% %d;
                return { i: %d, sum, nonce };
                """.formatted(busyMs, loops, i + 2, i);
    }

    static long expectedSum(int i, int loops) {
        long sum = 0;
        for (int k = 0; k < loops; k++) {
            sum += k % (i + 2);
        }
        return sum;
    }

    private record Answer(int server, int script, CallToolResult result) {
        JsonNode content() {
            return structured(result);
        }
    }

    /** Sends every script to every server at the same moment; returns the answers (or the failures). */
    private List<Future<Answer>> sendToAll(List<ServeProcess> servers, int scripts, int loops, int busyMs,
            Map<String, Object> extra) {
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Answer>> answers = new ArrayList<>();
        for (int s = 0; s < servers.size(); s++) {
            for (int i = 0; i < scripts; i++) {
                int server = s;
                int script = i;
                answers.add(callers.submit(() -> {
                    go.await();
                    Map<String, Object> arguments = new HashMap<>(extra);
                    arguments.put("code", script(script, loops, busyMs));
                    return new Answer(server, script, servers.get(server).call("execute_code", arguments));
                }));
            }
        }
        go.countDown();
        return answers;
    }

    private static void assertCorrect(Answer answer, int loops) {
        assertThat(answer.result().isError()).as("server %d, script %d: %s", answer.server(), answer.script(),
                answer.result().content()).isFalse();
        JsonNode value = answer.content().get("result");
        assertThat(value.get("i").intValue()).isEqualTo(answer.script());
        assertThat(value.get("sum").longValue()).isEqualTo(expectedSum(answer.script(), loops));
    }

    @Test
    void threeServersRunEachOfTwentyScriptsOnceAndAnInvalidationByOneHoldsForAll() throws Exception {
        int loops = 200_000;
        List<ServeProcess> servers = startFleet(3, "--store", "redis", "--redis-url", url(1), "--tool", "github=v1");

        List<Answer> answers = new ArrayList<>();
        for (Future<Answer> answer : sendToAll(servers, 20, loops, 0, Map.of("tools", List.of("github")))) {
            answers.add(answer.get(2, TimeUnit.MINUTES));
        }

        answers.forEach(answer -> assertCorrect(answer, loops));
        Map<Integer, Set<String>> noncesByScript = new HashMap<>();
        answers.forEach(answer -> noncesByScript.computeIfAbsent(answer.script(), i -> new HashSet<>())
                .add(answer.content().at("/result/nonce").textValue()));
        int runsPerScript = runsEachScriptMayHave();
        assertThat(noncesByScript).hasSize(20).allSatisfy((script, nonces) ->
                assertThat(nonces).as("executions of script %s; the servers said:%n%s", script, fleetLog())
                        .hasSizeBetween(1, runsPerScript));
        JsonNode stats = structured(servers.get(2).call("cache_stats", Map.of()));
        if (runsPerScript == 1) {
            assertThat(answers.stream().filter(answer -> answer.content().get("cache").textValue().equals("miss")))
                    .as("runs reported as a miss").hasSize(20);
            assertThat(stats.get("misses").longValue()).isEqualTo(20);
            assertThat(stats.get("hits").longValue()).isEqualTo(40);
        }
        assertThat(stats.get("entries").longValue()).isEqualTo(20);

        CallToolResult invalidated = servers.get(0).call("invalidate_tool", Map.of("tool", "github"));
        CallToolResult again = servers.get(1).call("execute_code",
                Map.of("code", script(0, loops), "tools", List.of("github")));

        assertThat(structured(invalidated).get("removed").intValue()).isEqualTo(20);
        assertThat(structured(again).get("cache").textValue()).isEqualTo("miss");
        assertThat(structured(again).at("/result/nonce").textValue())
                .isNotIn(noncesByScript.get(0));
    }

    /**
     * The same fleet on a real 3-master Redis Cluster (started for this test), named by a
     * {@code redis-cluster://} URL: one execution per script across the fleet, the others' answers
     * shared hits, and the cache spread over the masters (each of its partitions is a hash slot).
     */
    @Test
    void threeServersOnARedisClusterRunEachScriptOnceAndShareItsAnswer() throws Exception {
        int loops = 200_000;
        int scripts = 6;
        cluster = TestRedisCluster.start();
        List<ServeProcess> servers = startFleet(3, "--store", "redis", "--redis-url", cluster.url());

        List<Answer> answers = new ArrayList<>();
        for (Future<Answer> answer : sendToAll(servers, scripts, loops, 0, Map.of())) {
            answers.add(answer.get(2, TimeUnit.MINUTES));
        }

        answers.forEach(answer -> assertCorrect(answer, loops));
        Map<Integer, Set<String>> noncesByScript = new HashMap<>();
        answers.forEach(answer -> noncesByScript.computeIfAbsent(answer.script(), i -> new HashSet<>())
                .add(answer.content().at("/result/nonce").textValue()));
        int runsPerScript = runsEachScriptMayHave();
        assertThat(noncesByScript).hasSize(scripts).allSatisfy((script, nonces) ->
                assertThat(nonces).as("executions of script %s; the servers said:%n%s", script, fleetLog())
                        .hasSizeBetween(1, runsPerScript));
        JsonNode stats = structured(servers.get(1).call("cache_stats", Map.of()));
        if (runsPerScript == 1) {
            assertThat(stats.get("misses").longValue()).isEqualTo(scripts);
            assertThat(stats.get("hits").longValue()).isEqualTo(2L * scripts);
        }
        assertThat(stats.get("entries").longValue()).isEqualTo(scripts);
        CallToolResult later = servers.get(2).call("execute_code", Map.of("code", script(0, loops)));
        assertThat(structured(later).get("cache").textValue()).isEqualTo("hit");
        assertThat(cluster.keysPerNode("{execache:3p*}:e:*").stream().mapToLong(Long::longValue).sum())
                .as("every entry of the cache, whichever master holds it").isEqualTo(scripts);
        assertThat(cluster.keysPerNode()).as("the cache spread over the masters (its partitions, each a hash slot)")
                .filteredOn(count -> count > 0).hasSizeGreaterThan(1);
    }

    /** What the servers wrote to stderr, but for the SDK's own lines: why a run was repeated, if it was. */
    /**
     * One run per script across the fleet while Redis answers. A server whose Redis call outlasted its budget (Redis
     * itself starved on a loaded machine) says so, and takes no flight for a run begun meanwhile: that run goes on
     * where it is, as a slow store must never hold a run up, so the script may run once more on each such server.
     */
    private int runsEachScriptMayHave() {
        long slowStore = fleet.stream()
                .filter(server -> server.stderr().stream().anyMatch(line -> line.contains("cache store did not answer in time")))
                .count();
        return 1 + (int) slowStore;
    }

    private String fleetLog() {
        StringBuilder log = new StringBuilder();
        for (int i = 0; i < fleet.size(); i++) {
            for (String line : fleet.get(i).stderr()) {
                if (!line.contains("io.modelcontextprotocol")) {
                    log.append("server ").append(i).append(": ").append(line).append('\n');
                }
            }
        }
        return log.toString();
    }

    /** Waits, with a bound, until the fleet holds a flight in Redis: a run is under way. */
    private static void awaitAFlightHeld(org.redisson.api.RedissonClient client) {
        Awaitility.await("a run under way (a flight held in Redis)").atMost(Duration.ofSeconds(60)).pollInSameThread()
                .pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(5))
                .until(() -> client.getKeys().getKeysStreamByPattern("{execache:3p*}:f:*").findAny().isPresent());
    }

    /**
     * The killed server may have held the fleet's flight for some scripts: its lease lapses
     * within seconds once it stops renewing it, and the others then run them themselves.
     */
    @Test
    void killingOneServerMidRunLosesNothingForTheOthers() throws Exception {
        int loops = 1000;
        List<ServeProcess> servers = startFleet(3, "--store", "redis", "--redis-url", url(2), "--timeout", "20s");

        org.redisson.config.Config config = new org.redisson.config.Config();
        config.useSingleServer().setAddress(redis.url()).setDatabase(2);
        org.redisson.api.RedissonClient watcher = org.redisson.Redisson.create(config);
        List<Future<Answer>> answers;
        try {
            answers = sendToAll(servers, 4, loops, 1500, Map.of());
            awaitAFlightHeld(watcher);
        } finally {
            watcher.shutdown();
        }
        servers.get(0).kill();

        Map<Integer, List<Answer>> survivorsByScript = new HashMap<>();
        for (Future<Answer> future : answers) {
            try {
                Answer answer = future.get(2, TimeUnit.MINUTES);
                if (answer.server() != 0) {
                    survivorsByScript.computeIfAbsent(answer.script(), i -> new ArrayList<>()).add(answer);
                }
            } catch (ExecutionException e) {
                assertThat(e.getCause()).as("only calls to the killed server may fail").isNotNull();
            }
        }
        assertThat(survivorsByScript).hasSize(4).allSatisfy((script, survivors) -> assertThat(survivors).hasSize(2));
        survivorsByScript.values().forEach(survivors -> survivors.forEach(answer -> assertCorrect(answer, loops)));
        for (int script = 0; script < 4; script++) {
            CallToolResult later = servers.get(1 + script % 2).call("execute_code", Map.of("code", script(script, loops, 1500)));
            assertThat(structured(later).get("cache").textValue()).isEqualTo("hit");
            assertThat(structured(later).at("/result/sum").longValue()).isEqualTo(expectedSum(script, loops));
        }
    }

    @Test
    void withRedisStoppedServersRunUncachedAndWhenItIsBackTheyCacheAgain() throws Exception {
        List<ServeProcess> servers = startFleet(2, "--store", "redis", "--redis-url", url(3));
        ServeProcess first = servers.get(0);
        ServeProcess second = servers.get(1);
        assertThat(status(first, "return 'before'")).isEqualTo("miss");
        assertThat(status(second, "return 'before'")).isEqualTo("hit");

        redis.kill();
        CallToolResult downFirst = first.call("execute_code", Map.of("code", "return 6 * 7"));
        CallToolResult downSecond = second.call("execute_code", Map.of("code", "return 6 * 7"));

        assertThat(structured(downFirst).get("result").intValue()).isEqualTo(42);
        assertThat(structured(downFirst).get("cache").textValue()).isEqualTo("store_error");
        assertThat(structured(downSecond).get("result").intValue()).isEqualTo(42);
        assertThat(structured(downSecond).get("cache").textValue()).isEqualTo("store_error");

        redis.restart();
        // a check in the background finds Redis answering; until then each call skips it at once
        for (ServeProcess server : servers) {
            awaitCaching(server);
        }

        // once a server caches again, nothing of the outage (a pooled connection to the old
        // process, a skipped kind of operation) lingers
        assertThat(status(first, "return 'after'")).as(String.join("\n", first.stderr())).isEqualTo("miss");
        assertThat(status(second, "return 'after'")).as(String.join("\n", second.stderr())).isEqualTo("hit");
        for (ServeProcess server : servers) {
            assertThat(server.stderr()).as("one warning per outage, as what it is, one line, without client internals")
                    .filteredOn(line -> line.contains("warning") && !line.contains("not signed")).singleElement().asString()
                    .contains("cannot be reached").doesNotContain("refuses writes", "redis.call", "org.redisson", "Exception");
            assertThat(server.stderr()).as("one line when it ends, counting calls as calls")
                    .filteredOn(line -> line.contains("caching resumed")).singleElement().asString()
                    .containsPattern("after [1-9]\\d* calls? ran uncached \\(\\d+ store operations? failed\\); caching resumed");
        }
    }

    /** Calls until one is cached again (a miss that stored, or a hit), for as long as a check in the background may take. */
    private static void awaitCaching(ServeProcess server) {
        AtomicInteger probe = new AtomicInteger();
        Awaitility.await("Redis used again within a minute of its restart").atMost(Duration.ofSeconds(60))
                .pollInSameThread().pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(10))
                .until(() -> !"store_error".equals(status(server, "return 'probe " + probe.getAndIncrement() + "'")));
    }

    private static String status(ServeProcess server, String code) {
        return structured(server.call("execute_code", Map.of("code", code))).get("cache").textValue();
    }
}
