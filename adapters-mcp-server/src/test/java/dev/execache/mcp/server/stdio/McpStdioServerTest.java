package dev.execache.mcp.server.stdio;

import dev.execache.core.CapturedLog;
import dev.execache.gateway.TestTools;
import dev.execache.mcp.server.RawMcpClient;

import dev.execache.gateway.Json;
import dev.execache.mcp.server.stdio.McpStdioServer;

import org.awaitility.Awaitility;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.core.ExecutionResult;
import java.io.IOException;
import java.nio.channels.Channels;
import java.nio.channels.Pipe;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The server on in-process pipes, spoken to line by line. */
class McpStdioServerTest {
    private TestTools fixture;
    private McpStdioServer server;
    private RawMcpClient client;
    private CompletableFuture<Void> ended;

    @BeforeEach
    void start() throws IOException {
        start(Duration.ofSeconds(5));
    }

    private void start(Duration drainLimit) throws IOException {
        if (server != null) {
            server.close();
        }
        fixture = new TestTools();
        Pipe toServer = Pipe.open();
        Pipe fromServer = Pipe.open();
        server = new McpStdioServer(fixture.tools, "test",
                Channels.newInputStream(toServer.source()), Channels.newOutputStream(fromServer.sink()), drainLimit);
        client = new RawMcpClient(Channels.newOutputStream(toServer.sink()), Channels.newInputStream(fromServer.source()));
        ended = CompletableFuture.runAsync(() -> {
            try {
                server.awaitEnd();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
    }

    @AfterEach
    void stop() {
        server.close();
    }

    @Test
    void initializeNamesTheServerAndOffersTools() {
        JsonNode result = client.initialize();

        assertThat(result.at("/serverInfo/name").textValue()).isEqualTo("execache");
        assertThat(result.at("/capabilities/tools").isObject()).isTrue();
        assertThat(result.get("instructions").textValue()).contains("execute_code");
    }

    @Test
    void toolsAreListedWithTheirSchemasAndAnnotations() {
        client.initialize();

        JsonNode tools = client.request("tools/list", Map.of()).at("/result/tools");

        List<String> names = new ArrayList<>();
        tools.forEach(tool -> names.add(tool.get("name").textValue()));
        assertThat(names).containsExactly("execute_code", "cache_stats", "invalidate_tool", "clear_cache");
        assertThat(tools.get(0).at("/inputSchema/required/0").textValue()).isEqualTo("code");
        assertThat(tools.get(1).at("/annotations/readOnlyHint").booleanValue()).isTrue();
        // destructive is MCP's default: left out of the list
        assertThat(tools.get(3).at("/annotations").has("destructiveHint")).isFalse();
        assertThat(tools.get(3).at("/annotations/idempotentHint").booleanValue()).isTrue();
    }

    @Test
    void executeIsAMissThenAHit() {
        client.initialize();

        JsonNode miss = client.callTool("execute_code", Map.of("code", TestTools.TWO));
        JsonNode hit = client.callTool("execute_code", Map.of("code", TestTools.TWO));

        assertThat(miss.at("/structuredContent/result").intValue()).isEqualTo(2);
        assertThat(miss.at("/structuredContent/cache").textValue()).isEqualTo("miss");
        assertThat(hit.at("/structuredContent/cache").textValue()).isEqualTo("hit");
        assertThat(hit.get("isError").booleanValue()).isFalse();
    }

    @Test
    void aClientCannotNameAnotherAgentInItsMeta() {
        client.initialize();

        JsonNode result = client.request("tools/call", Map.of("name", "execute_code",
                "arguments", Map.of("code", "return 'mine'"),
                "_meta", Map.of("dev.execache/agent", "mallory", "dev.execache/requestId", 99))).get("result");

        assertThat(result.get("isError").booleanValue()).isFalse();
        assertThat(fixture.requests).extracting(request -> request.agent()).containsExactly("raw");
    }

    @Test
    void hitsOfRunsInTurnAreEachTheirOwnAnswer() throws Exception {
        client.initialize();
        Map<String, Object> one = Map.of("code", "return context", "context", Map.of("n", 1));
        Map<String, Object> two = Map.of("code", "return context", "context", Map.of("n", 2));

        client.callTool("execute_code", one);
        client.callTool("execute_code", two);
        JsonNode oneHit = client.callTool("execute_code", one);
        JsonNode oneAgain = client.callTool("execute_code", one);
        JsonNode twoHit = client.callTool("execute_code", two);

        for (JsonNode answer : List.of(oneHit, oneAgain)) {
            assertThat(answer.at("/structuredContent/result/n").intValue()).isEqualTo(1);
            assertThat(answer.at("/structuredContent/cache").textValue()).isEqualTo("hit");
        }
        assertThat(twoHit.at("/structuredContent/result/n").intValue()).isEqualTo(2);
        assertThat(twoHit.at("/structuredContent/cache").textValue()).isEqualTo("hit");
        assertThat(twoHit.at("/structuredContent/key")).isNotEqualTo(oneHit.at("/structuredContent/key"));
        for (JsonNode answer : List.of(oneHit, oneAgain, twoHit)) {
            assertThat(Json.MAPPER.readTree(answer.at("/content/0/text").textValue()))
                    .isEqualTo(answer.get("structuredContent"));
        }
    }

    /** An answer's structured content without what differs from hit to hit (the time a hit saved). */
    private static JsonNode withoutSaved(JsonNode answer) {
        ObjectNode content = answer.get("structuredContent").deepCopy();
        content.remove("savedMs");
        return content;
    }

    @Test
    void theSameHitIsWrittenInTheEraOfEachRequest() {
        client.initialize();
        Map<String, Object> envelope = Map.of("io.modelcontextprotocol/protocolVersion", "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities", Map.of());

        client.callTool("execute_code", Map.of("code", TestTools.TWO));
        JsonNode legacy = client.callTool("execute_code", Map.of("code", TestTools.TWO));
        JsonNode modern = client.request("tools/call", Map.of("name", "execute_code",
                "arguments", Map.of("code", TestTools.TWO), "_meta", envelope)).get("result");
        JsonNode legacyAgain = client.callTool("execute_code", Map.of("code", TestTools.TWO));

        assertThat(legacy.has("resultType")).isFalse();
        assertThat(modern.get("resultType").textValue()).isEqualTo("complete");
        assertThat(modern.at("/_meta/io.modelcontextprotocol~1serverInfo/name").textValue()).isEqualTo("execache");
        assertThat(withoutSaved(modern)).isEqualTo(withoutSaved(legacy));
        assertThat(legacyAgain.has("resultType")).isFalse();
        assertThat(legacyAgain.get("_meta").fieldNames()).toIterable().containsExactly("dev.execache/cache");
        assertThat(withoutSaved(legacyAgain)).isEqualTo(withoutSaved(legacy));
    }

    @Test
    void argumentsAgainstTheSchemaAreAToolErrorAndTheServerGoesOn() {
        client.initialize();

        JsonNode wrongType = client.callTool("execute_code", Map.of("code", TestTools.TWO, "context", List.of(1)));
        JsonNode unknownArgument = client.callTool("execute_code", Map.of("code", TestTools.TWO, "ctx", Map.of()));
        JsonNode after = client.callTool("execute_code", Map.of("code", TestTools.TWO));

        assertThat(wrongType.get("isError").booleanValue()).isTrue();
        assertThat(wrongType.at("/content/0/text").textValue()).contains("context");
        assertThat(unknownArgument.get("isError").booleanValue()).isTrue();
        assertThat(unknownArgument.at("/content/0/text").textValue()).contains("ctx");
        assertThat(after.at("/structuredContent/result").intValue()).isEqualTo(2);
    }

    @Test
    void aMalformedLineGetsAProtocolErrorAndTheServerKeepsServing() {
        client.initialize();

        client.send("{\"jsonrpc\":\"2.0\",\"id\":77,\"method\":");
        JsonNode parseError = client.response(null);
        client.send("{\"jsonrpc\":\"2.0\",\"id\":78}");
        JsonNode invalid = client.response(78);
        JsonNode after = client.callTool("execute_code", Map.of("code", TestTools.TWO));

        assertThat(parseError.at("/error/code").intValue()).isEqualTo(-32700);
        assertThat(invalid.at("/error/code").intValue()).isEqualTo(-32600);
        assertThat(after.at("/structuredContent/result").intValue()).isEqualTo(2);
    }

    @Test
    void aKeyGivenTwiceInOneObjectAtAnyDepthIsAParseErrorAndTheServerKeepsServing() {
        client.initialize();

        client.send("{\"jsonrpc\":\"2.0\",\"id\":80,\"method\":\"tools/call\",\"method\":\"tools/list\"}");
        JsonNode topLevel = client.response(null);
        client.send("{\"jsonrpc\":\"2.0\",\"id\":81,\"method\":\"tools/call\",\"params\":{\"name\":\"execute_code\","
                + "\"arguments\":{\"code\":\"return 1\",\"context\":{\"a\":1,\"a\":2}}}}");
        JsonNode nested = client.response(null);
        JsonNode after = client.callTool("execute_code", Map.of("code", TestTools.TWO));

        assertThat(topLevel.at("/error/code").intValue()).isEqualTo(-32700);
        assertThat(nested.at("/error/code").intValue()).isEqualTo(-32700);
        assertThat(nested.at("/error/message").textValue()).isEqualTo("Parse error: the line is not JSON");
        assertThat(after.at("/structuredContent/result").intValue()).isEqualTo(2);
    }

    @Test
    void aLineLongerThanOneReadAndLinesSentTogetherAreEachReadWhole() {
        client.initialize();
        // two-byte characters across the reads' boundaries, and more than two reads' worth
        String big = "é".repeat(5000) + "x".repeat(12_000);

        JsonNode echoed = client.callTool("execute_code", Map.of("code", "return context", "context", Map.of("text", big)));
        client.send("{\"jsonrpc\":\"2.0\",\"id\":901,\"method\":\"tools/call\",\"params\":{\"name\":\"execute_code\","
                + "\"arguments\":{\"code\":\"" + TestTools.TWO + "\"}}}\r\n"
                + "{\"jsonrpc\":\"2.0\",\"id\":902,\"method\":\"tools/call\",\"params\":{\"name\":\"execute_code\","
                + "\"arguments\":{\"code\":\"return context\",\"context\":{\"n\":902}}}}");
        JsonNode first = client.response(901);
        JsonNode second = client.response(902);

        assertThat(echoed.at("/structuredContent/result/text").textValue()).isEqualTo(big);
        assertThat(first.at("/result/structuredContent/result").intValue()).isEqualTo(2);
        assertThat(second.at("/result/structuredContent/result/n").intValue()).isEqualTo(902);
    }

    @Test
    void anUnknownMethodIsAProtocolError() {
        client.initialize();

        JsonNode response = client.request("tools/frobnicate", Map.of());

        assertThat(response.at("/error/code").intValue()).isEqualTo(-32601);
    }

    @Test
    void atTheEndOfInputWhatWasReadIsAnsweredThenServingEnds() throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        fixture.sandbox.answer(request -> {
            running.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return ExecutionResult.success("\"late\"", "", Duration.ofMillis(1));
        });
        client.initialize();
        int id = client.sendRequest("tools/call", Map.of("name", "execute_code", "arguments", Map.of("code", "slow")));
        assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();

        client.close();
        awaitSomeThreadIn("awaitAnswers");
        assertThat(ended).as("input has ended, the held run is not answered yet").isNotDone();
        release.countDown();

        assertThat(client.response(id).at("/result/structuredContent/result").textValue()).isEqualTo("late");
        ended.get(10, TimeUnit.SECONDS);
    }

    /** Waits, with a bound, until the transport has read the end of input and waits for answers. */
    private static void awaitSomeThreadIn(String method) {
        Awaitility.await("a thread in " + method).atMost(Duration.ofSeconds(60)).pollInSameThread()
                .pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(1))
                .until(() -> Thread.getAllStackTraces().values().stream().flatMap(Arrays::stream)
                        .anyMatch(frame -> frame.getMethodName().equals(method)));
    }

    @Test
    void theEndOfInputEndsTheServerAfterTheDrainLimitEvenWithARunThatNeverEnds() throws Exception {
        start(Duration.ofMillis(300));
        fixture.sandbox.answer(request -> {
            try {
                new CountDownLatch(1).await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return ExecutionResult.success("0", "", Duration.ZERO);
        });
        try (CapturedLog log = new CapturedLog()) {
            client.initialize();
            client.sendRequest("tools/call", Map.of("name", "execute_code", "arguments", Map.of("code", "forever")));

            client.close();

            ended.get(10, TimeUnit.SECONDS);
            assertThat(log.lines()).contains("input ended; gave up waiting for 1 unanswered requests");
        }
    }

    @Test
    void everyOneOfManyConcurrentCallsIsAnswered() {
        client.initialize();
        List<Integer> ids = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            ids.add(client.sendRequest("tools/call", Map.of("name", "execute_code",
                    "arguments", Map.of("code", "return context", "context", Map.of("i", i % 30)))));
        }

        for (int i = 0; i < ids.size(); i++) {
            assertThat(client.response(ids.get(i)).at("/result/structuredContent/result/i").intValue()).isEqualTo(i % 30);
        }
        assertThat(fixture.sandbox.executions()).isEqualTo(30);
    }

    @Test
    void aSlowRunDoesNotHoldUpTheCallsBehindIt() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        fixture.sandbox.answer(request -> {
            if (request.code().equals("slow")) {
                try {
                    release.await(20, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return ExecutionResult.success("\"" + request.code() + "\"", "", Duration.ofMillis(1));
        });
        client.initialize();
        int slow = client.sendRequest("tools/call", Map.of("name", "execute_code", "arguments", Map.of("code", "slow")));

        JsonNode fast = client.callTool("execute_code", Map.of("code", "fast"));
        release.countDown();

        assertThat(fast.at("/structuredContent/result").textValue()).isEqualTo("fast");
        assertThat(client.response(slow).at("/result/structuredContent/result").textValue()).isEqualTo("slow");
    }

    @Test
    void aCancellationSentWhileARunGoesOnStopsItAndGetsNoAnswer() throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch stopped = new CountDownLatch(1);
        fixture.sandbox.answer(request -> {
            running.countDown();
            try {
                new CountDownLatch(1).await();
            } catch (InterruptedException e) {
                stopped.countDown();
                Thread.currentThread().interrupt();
            }
            return ExecutionResult.success("0", "", Duration.ZERO);
        });
        client.initialize();
        int slow = client.sendRequest("tools/call", Map.of("name", "execute_code", "arguments", Map.of("code", "forever")));
        assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();

        client.send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":" + slow + "}}");
        assertThat(stopped.await(10, TimeUnit.SECONDS)).isTrue();
        JsonNode after = client.callTool("cache_stats", Map.of());

        assertThat(after.get("isError").booleanValue()).isFalse();
        assertThat(client.unclaimed()).noneMatch(message -> message.path("id").intValue() == slow);
    }
}
