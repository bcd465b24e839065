package dev.execache.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.core.StoreGuard;
import dev.execache.core.CachePolicy;
import dev.execache.core.MutableClock;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.ToolResult;
import dev.execache.core.spi.CatalogTool;
import dev.execache.store.memory.MemoryCacheStore;
import dev.execache.tools.mcp.McpToolCatalog;
import dev.execache.tools.mcp.UrlServerSettings;
import dev.execache.core.CapturedLog;
import dev.execache.tools.mcp.HttpLab;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The gateway in front of a url server: the tests' HTTP lab server of the 2025 era (the official
 * TypeScript SDK's Streamable HTTP transport, answers as resumable SSE streams), which wants a
 * bearer token.
 */
class UrlServersTest {
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(20);
    private static final String TOKEN = "tok-3b9f-never-shown";
    private static HttpLab lab;

    private final List<McpToolCatalog> catalogs = new ArrayList<>();
    private final MutableToolVersions versions = new MutableToolVersions();
    private final MutableClock clock = new MutableClock();
    private McpToolCatalog catalog;

    @BeforeAll
    static void startLab() throws IOException {
        lab = HttpLab.start("--era", "2025", "--token", TOKEN);
    }

    @AfterAll
    static void stopLab() throws InterruptedException {
        lab.close();
    }

    @AfterEach
    void closeCatalogs() {
        catalogs.forEach(McpToolCatalog::close);
    }

    private static UrlServerSettings server(String token) {
        return new UrlServerSettings("remote", lab.url(), Map.of("Authorization", "Bearer ${LAB_TOKEN}"), true, null,
                token == null ? Map.of() : Map.of("LAB_TOKEN", token));
    }

    private Gateway gateway(UrlServerSettings settings) {
        catalog = new McpToolCatalog(List.of(settings), CALL_TIMEOUT, Duration.ofHours(1), line -> { }, clock).start();
        catalogs.add(catalog);
        return Gateway.builder(catalog, StoreGuard.of(new MemoryCacheStore(100, clock)), versions,
                ServerEntry.policy(List.of(new ServerEntry(settings, true)), List.of()), CachePolicy.DEFAULTS)
                .clock(clock).build();
    }

    private static JsonNode answer(ToolResult result) {
        assertThat(result.isError()).as(result.json()).isFalse();
        try {
            return Json.MAPPER.readTree(Json.MAPPER.readTree(result.json()).at("/content/0/text").textValue());
        } catch (IOException e) {
            throw new AssertionError("not a tool result: " + result.json(), e);
        }
    }

    private static String errorText(ToolResult result) {
        assertThat(result.isError()).as(result.json()).isTrue();
        try {
            return Json.MAPPER.readTree(result.json()).at("/content/0/text").textValue();
        } catch (IOException e) {
            throw new AssertionError("not a tool result: " + result.json(), e);
        }
    }

    @Test
    void aUrlServersReadsAreCachedThroughTheGatewayAndItsTokenIsNeverLogged() {
        Gateway gateway;
        List<String> logged;
        try (CapturedLog log = new CapturedLog()) {
            gateway = gateway(server(TOKEN));
            logged = log.lines();
        }

        JsonNode first = answer(gateway.call("remote__get_count", Map.of("who", "cached")));
        JsonNode second = answer(gateway.call("remote__get_count", Map.of("who", "cached")));

        assertThat(catalog.tools()).extracting(CatalogTool::name).contains("remote__get_count", "remote__increment");
        assertThat(versions.versions().get("remote__get_count")).startsWith("mcp:");
        assertThat(second).isEqualTo(first);
        assertThat(gateway.stats().get("remote__get_count").hits()).isEqualTo(1);
        assertThat(logged).anySatisfy(line -> assertThat(line).contains("server remote: connected")
                .contains("MCP 2025-11-25 over HTTP"));
        assertThat(String.join("\n", logged)).doesNotContain(TOKEN);
        assertThat(server(TOKEN).toString()).doesNotContain(TOKEN).contains("Authorization");
    }

    @Test
    void anAnswerWhoseStreamTheServerClosedIsResumedWithLastEventId() {
        Gateway gateway = gateway(server(TOKEN));

        JsonNode resumed = answer(gateway.call("remote__dropped_stream", Map.of("who", "resume")));

        assertThat(resumed.get("resumed").booleanValue()).as("the server closed the stream before answering").isTrue();
        assertThat(resumed.get("who").textValue()).isEqualTo("resume");
    }

    @Test
    void aSessionTheServerEndedIsStartedAgainOnceAndTheCallAnswered() {
        Gateway gateway = gateway(server(TOKEN));
        answer(gateway.call("remote__get_count", Map.of("who", "before-end")));

        answer(gateway.call("remote__end_sessions", Map.of()));
        JsonNode after = answer(gateway.call("remote__get_count", Map.of("who", "after-end")));

        assertThat(after.get("who").textValue()).isEqualTo("after-end");
    }

    @Test
    void refusedCredentialsNameTheServerAndTheHeaderButNeverTheValue() {
        String wrong = "wrong-5c1d-never-shown";
        Gateway gateway;
        String message;
        List<String> logged;
        try (CapturedLog log = new CapturedLog()) {
            gateway = gateway(server(wrong));
            message = errorText(gateway.call("remote__get_count", Map.of("who", "refused")));
            logged = log.lines();
        }

        assertThat(message).contains("server remote refused the credentials (HTTP 401)").contains("Authorization")
                .doesNotContain(wrong);
        assertThat(logged).anySatisfy(line -> assertThat(line).contains("refused the credentials"));
        assertThat(String.join("\n", logged)).doesNotContain(wrong);
    }

    @Test
    void aVariableThatIsNotSetMakesTheServerUnavailableNamingIt() {
        Gateway gateway = gateway(server(null));

        String message = errorText(gateway.call("remote__get_count", Map.of()));

        assertThat(message).contains("environment variable LAB_TOKEN").contains("not set").contains("unavailable");
    }

    @Test
    void aRateLimitedCallIsNeverCachedAndRetryAfterIsHonoured() {
        Gateway gateway = gateway(server(TOKEN));
        answer(gateway.call("remote__refuse_next", Map.of("status", 429, "count", 1, "retry_after", "120")));

        String limited = errorText(gateway.call("remote__get_count", Map.of("who", "limited")));
        String waiting = errorText(gateway.call("remote__get_count", Map.of("who", "limited")));
        clock.advance(Duration.ofSeconds(121));
        JsonNode answered = answer(gateway.call("remote__get_count", Map.of("who", "limited")));
        JsonNode cached = answer(gateway.call("remote__get_count", Map.of("who", "limited")));

        assertThat(limited).contains("server remote is rate limiting (HTTP 429)").contains("try again in 120 s");
        assertThat(waiting).contains("asked not to be called");
        assertThat(cached).isEqualTo(answered);
        assertThat(gateway.stats().get("remote__get_count").hits()).isEqualTo(1);
    }

    @Test
    void anUnavailableServerSays503AndItsRetryAfter() {
        Gateway gateway = gateway(server(TOKEN));
        answer(gateway.call("remote__refuse_next", Map.of("status", 503, "count", 1, "retry_after", "7")));

        String message = errorText(gateway.call("remote__get_count", Map.of("who", "unavailable")));

        assertThat(message).contains("server remote is unavailable (HTTP 503)").contains("try again in 7 s");
    }

    @Test
    void aBadGatewayIsAnErrorAndTheServerIsReachedAgain() {
        Gateway gateway = gateway(server(TOKEN));
        answer(gateway.call("remote__refuse_next", Map.of("status", 502, "count", 1)));

        String message = errorText(gateway.call("remote__get_count", Map.of("who", "bad-gateway")));
        JsonNode again = answer(gateway.call("remote__get_count", Map.of("who", "bad-gateway")));

        assertThat(message).contains("server remote cannot be reached: the proxy in front of it answered HTTP 502");
        assertThat(again.get("who").textValue()).isEqualTo("bad-gateway");
    }

    @Test
    void aCallThatDoesNotAnswerInTimeIsAnErrorAfterTheCallTimeout() throws InterruptedException {
        UrlServerSettings settings = server(TOKEN);
        McpToolCatalog slow = new McpToolCatalog(List.of(settings), Duration.ofSeconds(3), Duration.ofHours(1), line -> { },
                clock).start();
        catalogs.add(slow);
        CountDownLatch connected = new CountDownLatch(1);
        slow.addListener(tools -> connected.countDown());
        if (slow.tools().isEmpty()) {
            assertThat(connected.await(60, TimeUnit.SECONDS)).as("the server connected").isTrue();
        }

        String message = errorText(slow.call("remote__sleep", Map.of("ms", 120_000)));

        assertThat(message).contains("calling sleep on server remote failed: server remote did not answer in time");
    }

    @Test
    void toolsListChangedOnTheSessionsStreamRediscoversTheTools() throws InterruptedException {
        Gateway gateway = gateway(server(TOKEN));
        CountDownLatch changed = new CountDownLatch(1);
        catalog.addListener(tools -> {
            if (tools.stream().anyMatch(tool -> "Fails, told by list_changed.".equals(tool.definition().get("description")))) {
                changed.countDown();
            }
        });

        answer(gateway.call("remote__set_description",
                Map.of("tool", "fail", "description", "Fails, told by list_changed.", "notify", true)));

        assertThat(changed.await(60, TimeUnit.SECONDS)).as("the catalog saw the new description").isTrue();
    }
}
