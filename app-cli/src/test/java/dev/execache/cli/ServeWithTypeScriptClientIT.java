package dev.execache.cli;

import org.awaitility.Awaitility;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.gateway.ServeTools;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code execache serve} as agent hosts reach it: through the official TypeScript SDK client. */
class ServeWithTypeScriptClientIT {
    private static final Map<String, String> NO_POOL = Map.of("EXECACHE_WARM_POOL", "0");

    @TempDir
    Path dir;

    private static JsonNode facts(JsonNode result) throws Exception {
        return TypeScriptClient.JSON.readTree(result.get("text").textValue());
    }

    @Test
    void aThrownErrorASyntaxErrorAndATimeoutReachTheClientAsReadableToolErrors() throws Exception {
        try (TypeScriptClient client = TypeScriptClient.start("errors", Map.of(), "--store", "memory")) {
            List<JsonNode> results = client.all("result");

            assertThat(results).hasSize(4).noneMatch(result -> result.has("thrown"));
            assertThat(results.subList(0, 3)).allSatisfy(result -> {
                assertThat(result.get("isError").booleanValue()).isTrue();
                assertThat(result.get("structured").isNull()).isTrue();
            });
            JsonNode thrown = facts(results.get(0)).get("error");
            assertThat(thrown.get("type").textValue()).isEqualTo("RuntimeError");
            assertThat(thrown.get("message").textValue()).contains("boom");
            assertThat(thrown.get("stack").textValue()).contains("boom");
            assertThat(thrown.get("line").intValue()).isEqualTo(2);
            assertThat(thrown.get("column").intValue()).isPositive();
            assertThat(facts(results.get(1)).at("/error/type").textValue()).isEqualTo("SyntaxError");
            assertThat(facts(results.get(2)).at("/error/type").textValue()).isEqualTo("TimeoutError");
            assertThat(results.get(3).get("isError").booleanValue()).isFalse();
            assertThat(results.get(3).at("/structured/result/ok").booleanValue()).isTrue();
        }
    }

    @Test
    void callsAreCountedForTheAgentTheClientNamedInInitialize() throws Exception {
        try (TypeScriptClient client = TypeScriptClient.start("agents", Map.of(), "--store", "memory")) {
            JsonNode agents = client.await("stats").at("/stats/agents");

            assertThat(agents.fieldNames()).toIterable().containsExactly("execache-ts-it");
            assertThat(agents.at("/execache-ts-it/misses").longValue()).isEqualTo(1);
            assertThat(agents.at("/execache-ts-it/hits").longValue()).isEqualTo(1);
        }
    }

    @Test
    void aResultOverTheLineLimitIsAnOutputLimitErrorAndTheConnectionStays() throws Exception {
        try (TypeScriptClient client = TypeScriptClient.start("large", Map.of(), "--store", "memory")) {
            List<JsonNode> results = client.all("result");

            assertThat(results).hasSize(2).noneMatch(result -> result.has("thrown"));
            assertThat(results.get(0).get("isError").booleanValue()).isTrue();
            assertThat(facts(results.get(0)).at("/error/type").textValue()).isEqualTo("OutputLimitError");
            assertThat(facts(results.get(0)).at("/error/message").textValue())
                    .contains(Integer.toString(ServeTools.MAX_ANSWER_BYTES));
            assertThat(results.get(1).at("/structured/result").textValue()).isEqualTo("still connected");
        }
    }

    @Test
    void cancellationKillsTheRunStoresNothingAndSendsNoAnswer() throws Exception {
        try (TypeScriptClient client = TypeScriptClient.start("cancel", NO_POOL, "--store", "memory")) {
            client.await("calling");
            ProcessHandle server = client.server();
            awaitCondition(() -> denoUnder(server).size() == 1);
            List<ProcessHandle> runs = denoUnder(server);

            long cancelledAt = System.nanoTime();
            client.send("cancel");
            JsonNode cancelled = client.await("cancelled");
            awaitCondition(() -> runs.stream().noneMatch(ProcessHandle::isAlive));
            long goneAfterMicros = (System.nanoTime() - cancelledAt) / 1000;
            client.send("check");
            JsonNode after = client.await("stats");

            System.out.printf("measured: cancel to Deno process gone %.1f ms%n", goneAfterMicros / 1000.0);
            assertThat(cancelled.at("/how/rejected").textValue()).isNotNull();
            assertThat(runs).noneMatch(ProcessHandle::isAlive);
            assertThat(after.at("/stats/entries").intValue()).isZero();
            assertThat(after.get("errors")).as("a late answer to the cancelled call").isEmpty();
            client.awaitExit();
            assertThat(client.stderr()).noneMatch(line -> line.contains("No handler registered"));
        }
    }

    @Test
    void concurrentIdenticalCallsRunOnceAndEveryCallIsCounted() throws Exception {
        try (TypeScriptClient client = TypeScriptClient.start("burst", Map.of(), "--store", "memory")) {
            JsonNode results = client.await("results");
            JsonNode stats = client.await("stats").get("stats");

            assertThat(results.get("errors").intValue()).isZero();
            assertThat(results.get("caches")).hasSize(20);
            assertThat(stats.get("misses").longValue()).isEqualTo(1);
            assertThat(stats.get("hits").longValue() + stats.get("misses").longValue() + stats.get("shared").longValue())
                    .isEqualTo(20);
        }
    }

    @Test
    void callsBeyondTheBoundOnRunsAtOnceWaitTheirTurnAndAreAllAnswered() throws Exception {
        Map<String, String> oneAtATime = Map.of("EXECACHE_WARM_POOL", "0", "EXECACHE_MAX_RUNS", "1");
        try (TypeScriptClient client = TypeScriptClient.start("spread", oneAtATime, "--store", "memory")) {
            JsonNode values = client.await("results").get("values");

            assertThat(values).hasSize(3);
            assertThat(values).extracting(value -> value.get("n").intValue()).containsExactlyInAnyOrder(1, 2, 3);
            // each run's code timed itself: the most whose times overlap is the most that ran at once
            assertThat(mostAtOnce(values)).isEqualTo(1);
        }
    }

    /** The highest number of the runs whose times ({@code began} to {@code ended}) overlap at one instant. */
    private static int mostAtOnce(JsonNode runs) {
        List<long[]> edges = new ArrayList<>();
        runs.forEach(run -> {
            edges.add(new long[] {run.get("began").longValue(), 1});
            edges.add(new long[] {run.get("ended").longValue(), -1});
        });
        // at one instant an end comes before a beginning: a run that begins as another ends does not overlap it
        edges.sort(Comparator.<long[]>comparingLong(edge -> edge[0]).thenComparingLong(edge -> edge[1]));
        int now = 0;
        int most = 0;
        for (long[] edge : edges) {
            now += (int) edge[1];
            most = Math.max(most, now);
        }
        return most;
    }

    @Test
    void aRunThatTakesLongerSendsProgressToAClientThatAskedForIt() throws Exception {
        try (TypeScriptClient client = TypeScriptClient.start("progress", Map.of(), "--store", "memory")) {
            JsonNode result = client.await("result");

            assertThat(result.at("/structured/result").textValue()).isEqualTo("slow");
            assertThat(result.get("progress")).isNotEmpty();
            assertThat(result.at("/progress/0/progress").intValue()).isPositive();
        }
    }

    @Test
    void logMessagesGoToTheClientAtTheLevelItSetAndABogusLevelIsRefused() throws Exception {
        try (TypeScriptClient client = TypeScriptClient.start("logging", Map.of(), "--store", "memory")) {
            JsonNode logs = client.await("logs").get("logs");
            JsonNode bogus = client.await("bogus-level");

            assertThat(logs).anySatisfy(log -> {
                assertThat(log.get("level").textValue()).isEqualTo("info");
                assertThat(log.get("data").textValue()).contains("tool github");
            });
            assertThat(bogus.get("code").intValue()).isEqualTo(-32602);
            assertThat(bogus.get("thrown").textValue()).contains("params.level");
        }
    }

    @Test
    void deepResultsAndLoneSurrogatesComeBackIdenticalThroughServeAndRunJson() throws Exception {
        String code = "let v = 'bottom'; for (let i = 0; i < 1500; i++) v = [v]; "
                + "return {deep: v, lone: '\\ud800', pair: '\\ud83d\\ude00'}";
        JsonNode served;
        try (TypeScriptClient client = TypeScriptClient.start("deep", Map.of(), "--store", "memory")) {
            JsonNode result = client.await("result");
            assertThat(result.get("isError").booleanValue()).as(result.toString()).isFalse();
            served = TypeScriptClient.JSON.readTree(result.get("result").textValue());
        }
        CliProcess.Result run = new CliProcess(dir).runWithInput(code, "run", "-", "--json", "--store", "memory");
        JsonNode ran = TypeScriptClient.JSON.readTree(run.stdout()).get("result");

        assertThat(served.get("lone").textValue()).isEqualTo("\ud800");
        assertThat(served.get("pair").textValue()).isEqualTo("\ud83d\ude00");
        assertThat(depth(served.get("deep"))).isEqualTo(1500);
        assertThat(ran).as(run.toString()).isEqualTo(served);
    }

    private static int depth(JsonNode node) {
        int depth = 0;
        while (node.isArray()) {
            node = node.get(0);
            depth++;
        }
        return depth;
    }

    static List<ProcessHandle> denoUnder(ProcessHandle server) {
        return server.descendants()
                .filter(process -> process.info().command().map(command -> command.endsWith("deno")).orElse(false))
                .filter(ProcessHandle::isAlive)
                .toList();
    }

    static void awaitCondition(BooleanSupplier condition) {
        Awaitility.await().atMost(Duration.ofSeconds(60)).pollInSameThread().pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(1)).until(condition::getAsBoolean);
    }
}
