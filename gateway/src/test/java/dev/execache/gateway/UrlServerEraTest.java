package dev.execache.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.core.StoreGuard;
import dev.execache.core.CachePolicy;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.ToolResult;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import dev.execache.core.spi.ToolCatalog;
import dev.execache.store.memory.MemoryCacheStore;
import dev.execache.tools.mcp.McpToolCatalog;
import dev.execache.tools.mcp.UrlServerSettings;
import dev.execache.core.CapturedLog;
import dev.execache.tools.mcp.HttpLab;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A url server of the 2026-07-28 era (stateless: server/discover, _meta on every request, ttlMs
 * on tools/list), written by hand in the tests' HTTP lab server since the pinned TypeScript SDK
 * knows only 2025-11-25.
 */
class UrlServerEraTest {
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(20);
    private static HttpLab lab;
    /** A lab of the 2026-07-28 era that logs (--features) and asks the client (--asks). */
    private static HttpLab logging;

    private final MutableToolVersions versions = new MutableToolVersions();
    private McpToolCatalog catalog;

    @BeforeAll
    static void startLab() throws IOException {
        lab = HttpLab.start("--era", "2026", "--ttl-ms", "1000");
        logging = HttpLab.start("--era", "2026", "--features", "--asks");
    }

    @AfterAll
    static void stopLab() throws InterruptedException {
        lab.close();
        logging.close();
    }

    @AfterEach
    void closeCatalog() {
        catalog.close();
    }

    private Gateway gateway() {
        return gateway(lab);
    }

    private Gateway gateway(HttpLab lab) {
        UrlServerSettings settings = new UrlServerSettings("modern", lab.url(), Map.of(), true);
        catalog = new McpToolCatalog(List.of(settings), CALL_TIMEOUT, Duration.ofHours(1), line -> { },
                Clock.systemUTC()).start();
        return Gateway.builder(catalog, StoreGuard.of(new MemoryCacheStore(100, Clock.systemUTC())), versions,
                ServerEntry.policy(List.of(new ServerEntry(settings, true)), List.of()), CachePolicy.DEFAULTS).build();
    }

    private static JsonNode answer(ToolResult result) throws IOException {
        assertThat(result.isError()).as(result.json()).isFalse();
        return Json.MAPPER.readTree(Json.MAPPER.readTree(result.json()).at("/content/0/text").textValue());
    }

    @Test
    void theLevelAskedForTravelsInEachRequestsMetaAndTheServersMessagesComeOnTheCallsStream() throws IOException {
        Gateway gateway = gateway(logging);
        List<String> servers = new CopyOnWriteArrayList<>();
        List<JsonNode> heard = new CopyOnWriteArrayList<>();
        catalog.addLogListener((server, message) -> {
            servers.add(server);
            heard.add(Json.MAPPER.valueToTree(message));
        });
        Map<String, Object> logged = Map.of("level", "warning", "logger", "db", "data", Map.of("rows", 3));

        // no level asked yet: the request carries none, so the server sends no message (the spec's rule)
        answer(gateway.call("modern__log", logged));
        assertThat(heard).isEmpty();
        catalog.setLogLevel("info");
        await().atMost(Duration.ofMinutes(1)).until(() -> {
            answer(gateway.call("modern__log", logged));
            return !heard.isEmpty();
        });

        assertThat(servers.get(0)).isEqualTo("modern");
        assertThat(heard.get(0)).isEqualTo(Json.MAPPER.valueToTree(logged));
    }

    @Test
    void aServerThatOffers20260728IsSpokenToWithoutAHandshakeAndItsReadsAreCached() throws IOException {
        List<String> logged;
        Gateway gateway;
        try (CapturedLog log = new CapturedLog()) {
            gateway = gateway();
            logged = log.lines();
        }

        JsonNode first = answer(gateway.call("modern__get_count", Map.of("who", "2026")));
        JsonNode second = answer(gateway.call("modern__get_count", Map.of("who", "2026")));

        assertThat(logged).anySatisfy(line -> assertThat(line).contains("http-lab-2026 1.0.0, MCP 2026-07-28 over HTTP"));
        assertThat(catalog.instructions()).containsExactly(Map.entry("modern", "The HTTP lab of the 2026-07-28 era."));
        assertThat(first.get("era").textValue()).isEqualTo("2026");
        assertThat(second).isEqualTo(first);
        assertThat(gateway.stats().get("modern__get_count").hits()).isEqualTo(1);
        assertThat(Json.MAPPER.readTree(gateway.call("modern__get_count", Map.of("who", "fresh")).json()).has("resultType"))
                .isFalse();
    }

    @Test
    void theToolsAreListedAgainWhenTheTtlOfTheLastListLapses() throws IOException, InterruptedException {
        Gateway gateway = gateway();
        String before = versions.versions().get("modern__fail");
        CountDownLatch relisted = new CountDownLatch(1);
        catalog.addListener(tools -> {
            if (tools.stream().anyMatch(tool -> "Fails, seen at the ttl.".equals(tool.definition().get("description")))) {
                relisted.countDown();
            }
        });

        answer(gateway.call("modern__set_description", Map.of("tool", "fail", "description", "Fails, seen at the ttl.")));

        assertThat(relisted.await(60, TimeUnit.SECONDS)).as("listed again after ttlMs, with no notification").isTrue();
        assertThat(versions.versions().get("modern__fail")).isNotEqualTo(before);
    }

    /** An agent of the 2026-07-28 era: it takes a server's rounds as made, and may have answered before it was asked. */
    private record RoundsAgent(List<String> rounds, String givenAnswers) implements ToolCatalog.Agent {
        @Override
        public String ask(String method, String params) {
            throw new AssertionError("asked one request at a time: " + method);
        }

        @Override
        public boolean asksRounds() {
            return true;
        }

        @Override
        public String askRound(String inputRequests, String requestState) {
            rounds.add(requestState + " " + inputRequests);
            return "{\"ask_roots\":{\"roots\":[{\"uri\":\"file:///work\"}]}}";
        }
    }

    @Test
    void aRoundReachesTheAgentAsTheServerMadeItAndNoAnswerThatNeededOneIsStored() throws IOException {
        Gateway gateway = gateway(logging);
        List<String> rounds = new CopyOnWriteArrayList<>();
        RoundsAgent asked = new RoundsAgent(rounds, null);
        RoundsAgent answeredBefore = new RoundsAgent(rounds, "{\"inputResponses\":{\"ask_roots\":{\"roots\":"
                + "[{\"uri\":\"file:///given\"}]}},\"requestState\":\"ask_roots-state\"}");

        JsonNode first = answer(Gateway.askingAgent(asked, () -> gateway.call("modern__ask_roots", Map.of())));
        JsonNode second = answer(Gateway.askingAgent(asked, () -> gateway.call("modern__ask_roots", Map.of())));
        JsonNode given = answer(Gateway.askingAgent(answeredBefore, () -> gateway.call("modern__ask_roots", Map.of())));
        JsonNode givenAgain = answer(Gateway.askingAgent(answeredBefore,
                () -> gateway.call("modern__ask_roots", Map.of())));

        // the server's key and requestState, as it gave them
        assertThat(rounds).hasSize(2).allSatisfy(round -> assertThat(round)
                .startsWith("ask_roots-state {\"ask_roots\":{\"method\":\"roots/list\""));
        assertThat(first.at("/roots/0/uri").textValue()).isEqualTo("file:///work");
        assertThat(second).isEqualTo(first);
        assertThat(given.at("/roots/0/uri").textValue()).isEqualTo("file:///given");
        assertThat(givenAgain).isEqualTo(given);
        // a read-only tool, but each answer depended on the agent's: none is kept
        assertThat(gateway.stats().get("modern__ask_roots").hits()).isZero();
    }

    /** An agent of the initialize era: asked each request of a server's round on its own, as on a call's stream. */
    private record OneAtATimeAgent(List<String> asked) implements ToolCatalog.Agent {
        @Override
        public String ask(String method, String params) {
            asked.add(method + " " + params);
            return "{\"action\":\"accept\",\"content\":{\"name\":\"Ada\"}}";
        }
    }

    @Test
    void aRequestThatNeedsTheAgentReachesItInItsEraAndNothingInputRequiredIsStored() throws IOException {
        Gateway gateway = gateway(logging);
        ObjectNode prompt = Json.MAPPER.createObjectNode().put("name", "modern__ask_name");
        ObjectNode read = Json.MAPPER.createObjectNode().put("uri", "lab://asks/name");
        List<String> asked = new CopyOnWriteArrayList<>();
        OneAtATimeAgent legacy = new OneAtATimeAgent(asked);

        // an agent of the initialize era: asked the server's request as its own, then given the answer
        for (int time = 0; time < 2; time++) {
            assertThat(Gateway.askingAgent(legacy, () -> gateway.features().answer("prompts/get", prompt, null))
                    .at("/messages/0/content/text").textValue()).isEqualTo("Hello, Ada");
            assertThat(Gateway.askingAgent(legacy, () -> gateway.features().answer("resources/read", read, null))
                    .at("/contents/0/text").textValue()).isEqualTo("Hello, Ada");
        }
        JsonNode called = answer(Gateway.askingAgent(legacy, () -> gateway.call("modern__ask_elicitation", Map.of())));
        // an agent of the 2026-07-28 era: the server's input_required as the server gave it, then its retry's answer
        ObjectNode rounds = gateway.features().answer("prompts/get", prompt, null);
        ObjectNode readRounds = gateway.features().answer("resources/read", read, null);
        JsonNode answers = Json.MAPPER.readTree("{\"ask_name\":{\"action\":\"accept\",\"content\":{\"name\":\"Grace\"}}}");
        ObjectNode retried = gateway.features().answer("prompts/get", prompt.deepCopy().put("requestState",
                "ask_name-state").set("inputResponses", answers), null);
        ObjectNode readRetried = gateway.features().answer("resources/read", read.deepCopy().put("requestState",
                "ask_name-state").set("inputResponses", answers), null);
        JsonNode roundsCalled = answer(Gateway.askingAgent(new RoundsAgent(new CopyOnWriteArrayList<>(), null),
                () -> gateway.call("modern__ask_roots", Map.of())));
        // and nobody to ask (the command line): the call fails, saying so
        ToolResult nobody = gateway.call("modern__ask_elicitation", Map.of());

        // asked each time (every read and the call): nothing that needed its answer was kept
        assertThat(asked).hasSize(5).allSatisfy(one -> assertThat(one).startsWith("elicitation/create {"));
        assertThat(asked.get(0)).contains("\"message\":\"Whose name?\"");
        assertThat(called.at("/content/name").textValue()).isEqualTo("Ada");
        for (ObjectNode first : List.of(rounds, readRounds)) {
            assertThat(first.path("resultType").textValue()).isEqualTo("input_required");
            assertThat(first.at("/inputRequests/ask_name/params/message").textValue()).isEqualTo("Whose name?");
            assertThat(first.path("requestState").textValue()).isEqualTo("ask_name-state");
        }
        assertThat(retried.at("/messages/0/content/text").textValue()).isEqualTo("Hello, Grace");
        assertThat(readRetried.at("/contents/0/text").textValue()).isEqualTo("Hello, Grace");
        assertThat(gateway.inspect("modern__prompts/get", Map.of("name", "ask_name")).info()).isEmpty();
        assertThat(gateway.inspect("modern__resources/read", Map.of("uri", "lab://asks/name")).info()).isEmpty();
        assertThat(roundsCalled.at("/roots/0/uri").textValue()).isEqualTo("file:///work");
        assertThat(nobody.isError()).isTrue();
        assertThat(nobody.json()).contains("no agent can be asked elicitation/create");
        for (String tool : List.of("modern__ask_elicitation", "modern__ask_roots")) {
            assertThat(gateway.inspect(tool, Map.of()).info()).as(tool).isEmpty();
            assertThat(gateway.stats().get(tool).hits()).as(tool).isZero();
        }
    }

    @Test
    void aToolTheServerDoesNotListIsPassedOnUncachedButOneExecacheLeftOutStaysOut() throws IOException {
        Gateway gateway = gateway(logging);
        List<String> noticed = new CopyOnWriteArrayList<>();
        gateway.onChange((changed, withdrawn) -> noticed.add(changed.size() + " " + withdrawn.size()));
        noticed.clear();

        OfferedTool unlisted = gateway.unlisted("modern__unlisted_echo");
        CallToolResult first = unlisted.call(new CallToolRequest("modern__unlisted_echo", Map.of("say", "hi"), null),
                RequestOrigin.UNKNOWN);
        CallToolResult second = unlisted.call(new CallToolRequest("modern__unlisted_echo", Map.of("say", "hi"), null),
                RequestOrigin.UNKNOWN);
        // the server says its tools changed, though its list stays the same: the agent is told, as directly
        answer(gateway.call("modern__set_description", Map.of("tool", "fail", "description", "Always fails.",
                "notify", true)));

        assertThat(gateway.specifications()).extracting(tool -> tool.tool().name()).contains("modern__get_count")
                .doesNotContain("modern__unlisted_echo", "modern__bad_header");
        JsonNode answered = Json.MAPPER.readTree(((McpSchema.TextContent) first.content().get(0)).text());
        assertThat(answered.at("/args/say").textValue()).isEqualTo("hi");
        // asked every time, never kept: what it does is not known
        assertThat(Json.MAPPER.readTree(((McpSchema.TextContent) second.content().get(0)).text()).path("served").intValue())
                .isEqualTo(answered.path("served").intValue() + 1);
        assertThat(gateway.inspect("modern__unlisted_echo", Map.of("say", "hi")).info()).isEmpty();
        // left out by execache (a header declared where the spec allows none), listed, or of no server: not callable
        assertThat(gateway.unlisted("modern__bad_header")).isNull();
        assertThat(gateway.unlisted("modern__get_count")).isNull();
        assertThat(gateway.unlisted("other__unlisted_echo")).isNull();
        assertThat(gateway.unlisted("unlisted_echo")).as("no server is offered without the prefix").isNull();
        assertThat(gateway.unlisted("modern__prompts/get")).as("not a tool's name").isNull();
        await().atMost(Duration.ofMinutes(1)).until(() -> noticed.contains("0 0"));
    }
}
