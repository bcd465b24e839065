package dev.execache.mcp.server.http;

import dev.execache.gateway.TestTools;
import dev.execache.mcp.server.RawHttp;

import dev.execache.mcp.server.http.HttpServeSettings;
import dev.execache.mcp.server.http.McpHttpServer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.mcp.server.http.HttpServeSettings.HttpToken;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code serve --http}'s server in process, spoken to by hand: both eras statelessly, the
 * 2026-07-28 header checks, and what keeps it safe by default (Host, Origin, tokens, body size);
 * the bound on requests at once, silence and the stop are in the module's {@code HttpLimitsTest}.
 * One open server and one with a token, shared by the class.
 */
class McpHttpServerTest {
    private static final String TOKEN = "s3cret-token-for-tests-0123456789";
    private static final String MODERN = "2026-07-28";

    private static McpHttpServer open;
    private static McpHttpServer guarded;

    @BeforeAll
    static void start() throws IOException {
        InetAddress loopback = InetAddress.getLoopbackAddress();
        open = new McpHttpServer(new TestTools().tools, "test",
                HttpServeSettings.of(loopback, 0, List.of(), Set.of("mcp.example.org"), Duration.ofSeconds(5))).start();
        guarded = new McpHttpServer(new TestTools().tools, "test",
                HttpServeSettings.of(loopback, 0, List.of(new HttpToken("agent-a", TOKEN)), Set.of(), Duration.ofSeconds(5))
                        .withLimits(2048, 4, Duration.ofSeconds(30))).start();
    }

    @AfterAll
    static void stop() {
        open.close();
        guarded.close();
    }

    private static String request(Object id, String method, String params) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"" + method + "\",\"params\":" + params + "}";
    }

    private static String envelope(String more) {
        return "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"" + MODERN + "\","
                + "\"io.modelcontextprotocol/clientCapabilities\":{}" + more + "}";
    }

    private static Map<String, String> modernHeaders(String method, String name) {
        Map<String, String> headers = new HashMap<>();
        headers.put("MCP-Protocol-Version", MODERN);
        headers.put("Mcp-Method", method);
        if (name != null) {
            headers.put("Mcp-Name", name);
        }
        return headers;
    }

    private static String callTwo(String meta) {
        return request(7, "tools/call", "{\"name\":\"execute_code\",\"arguments\":{\"code\":\"" + TestTools.TWO + "\"}"
                + (meta == null ? "" : "," + meta) + "}");
    }

    @Test
    void callsAreCountedForTheNamedTokensNameElseTheClientsNameAndNeverForANameTheClientSlipsIntoMeta() throws IOException {
        String ciBot = "ci-bot-token-0123456789abcdef";
        String team = "team-token-0123456789abcdef01";
        String bare = "bare-token-0123456789abcdef01";
        McpHttpServer named = new McpHttpServer(new TestTools().tools, "test",
                HttpServeSettings.of(InetAddress.getLoopbackAddress(), 0, List.of(new HttpToken("ci-bot", ciBot, true),
                        new HttpToken("claude-team", team, true), new HttpToken("line 3", bare, false)), Set.of(),
                        Duration.ofSeconds(5))).start();
        try {
            String legacyCall = callTwo(null);
            String modernCall = callTwo(envelope(",\"io.modelcontextprotocol/clientInfo\":{\"name\":\"Some Client/2\","
                    + "\"version\":\"1\"}"));
            String spoofing = callTwo("\"_meta\":{\"dev.execache/agent\":\"ci-bot\"}");

            RawHttp.post(named.port(), legacyCall, Map.of("Authorization", "Bearer " + ciBot));
            RawHttp.post(named.port(), legacyCall, Map.of("Authorization", "Bearer " + ciBot));
            Map<String, String> teamHeaders = new HashMap<>(modernHeaders("tools/call", "execute_code"));
            teamHeaders.put("Authorization", "Bearer " + team);
            RawHttp.post(named.port(), modernCall, teamHeaders);
            Map<String, String> bareHeaders = new HashMap<>(modernHeaders("tools/call", "execute_code"));
            bareHeaders.put("Authorization", "Bearer " + bare);
            RawHttp.post(named.port(), modernCall, bareHeaders);
            RawHttp.post(named.port(), spoofing, Map.of("Authorization", "Bearer " + bare));
            JsonNode stats = RawHttp.post(named.port(), request(9, "tools/call", "{\"name\":\"cache_stats\"}"),
                    Map.of("Authorization", "Bearer " + bare, "Accept", "application/json")).json()
                    .at("/result/structuredContent/agents");

            assertThat(stats.fieldNames()).toIterable().containsExactlyInAnyOrder("ci-bot", "claude-team",
                    "Some-Client-2", "unknown");
            assertThat(stats.at("/ci-bot/misses").longValue()).isEqualTo(1);
            assertThat(stats.at("/ci-bot/hits").longValue()).isEqualTo(1);
            assertThat(stats.at("/claude-team/hits").longValue()).isEqualTo(1);
            assertThat(stats.at("/Some-Client-2/hits").longValue()).isEqualTo(1);
            assertThat(stats.at("/unknown/hits").longValue()).isEqualTo(1);
        } finally {
            named.close();
        }
    }

    @Test
    void theInitializeEraIsAnsweredWithoutASession() throws IOException {
        RawHttp.Answer initialized = RawHttp.post(open.port(), request(1, "initialize",
                "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}"),
                Map.of());
        RawHttp.Answer notified = RawHttp.post(open.port(), "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
                Map.of("MCP-Protocol-Version", "2025-06-18"));
        // code and context no other test of the shared server sends, so that the first call is a miss
        String ownCall = request(7, "tools/call", "{\"name\":\"execute_code\",\"arguments\":{\"code\":"
                + "\"return context\",\"context\":{\"era\":\"initialize\"}}}");
        RawHttp.Answer miss = RawHttp.post(open.port(), ownCall, Map.of("Accept", "application/json"));
        RawHttp.Answer hit = RawHttp.post(open.port(), ownCall, Map.of("MCP-Protocol-Version", "2025-06-18",
                "Accept", "application/json"));

        assertThat(initialized.status()).isEqualTo(200);
        assertThat(initialized.json().at("/result/protocolVersion").textValue()).isEqualTo("2025-06-18");
        assertThat(initialized.header("Mcp-Session-Id")).isNull();
        assertThat(notified.status()).isEqualTo(202);
        assertThat(miss.json().at("/result/structuredContent/cache").textValue()).isEqualTo("miss");
        assertThat(hit.json().at("/result/structuredContent/cache").textValue()).isEqualTo("hit");
        assertThat(hit.json().at("/result/structuredContent/result/era").textValue()).isEqualTo("initialize");
        assertThat(hit.json().at("/result/resultType").isMissingNode()).isTrue();
    }

    @Test
    void theModernEraIsAnsweredFromEachRequestsEnvelope() throws IOException {
        RawHttp.Answer discovered = RawHttp.post(open.port(), request(1, "server/discover", "{" + envelope("") + "}"),
                modernHeaders("server/discover", null));
        RawHttp.Answer listed = RawHttp.post(open.port(), request(2, "tools/list", "{" + envelope("") + "}"),
                modernHeaders("tools/list", null));
        RawHttp.Answer called = RawHttp.post(open.port(), callTwo(envelope("")), modernHeaders("tools/call", "execute_code"));
        RawHttp.Answer initialize = RawHttp.post(open.port(), request(4, "initialize", "{" + envelope("") + "}"),
                modernHeaders("initialize", null));

        JsonNode discover = discovered.json().get("result");
        assertThat(discover.get("supportedVersions").get(0).textValue()).isEqualTo(MODERN);
        assertThat(discover.at("/capabilities/tools").isObject()).isTrue();
        assertThat(discover.get("resultType").textValue()).isEqualTo("complete");
        JsonNode list = listed.json().get("result");
        assertThat(list.get("ttlMs").longValue()).isEqualTo(300_000);
        assertThat(list.get("cacheScope").textValue()).isEqualTo("public");
        assertThat(list.at("/_meta/io.modelcontextprotocol~1serverInfo/name").textValue()).isEqualTo("execache");
        assertThat(called.header("Content-Type")).startsWith("text/event-stream");
        JsonNode answer = called.events().get(called.events().size() - 1);
        assertThat(answer.at("/result/resultType").textValue()).isEqualTo("complete");
        assertThat(answer.at("/result/structuredContent/result").intValue()).isEqualTo(2);
        assertThat(answer.get("id").intValue()).isEqualTo(7);
        assertThat(initialize.json().at("/error/code").intValue()).isEqualTo(-32601);
    }

    @Test
    void headersThatDisagreeWithTheBodyAreAHeaderMismatch() throws IOException {
        Map<String, String> wrongVersion = modernHeaders("tools/call", "execute_code");
        wrongVersion.put("MCP-Protocol-Version", "2025-11-25");
        Map<String, String> wrongMethod = modernHeaders("tools/list", "execute_code");
        Map<String, String> wrongName = modernHeaders("tools/call", "cache_stats");
        Map<String, String> noName = modernHeaders("tools/call", null);
        Map<String, String> base64Name = modernHeaders("tools/call", "=?base64?ZXhlY3V0ZV9jb2Rl?=");

        for (Map<String, String> headers : List.of(wrongVersion, wrongMethod, wrongName, noName)) {
            RawHttp.Answer answer = RawHttp.post(open.port(), callTwo(envelope("")), headers);
            assertThat(answer.status()).as(headers.toString()).isEqualTo(400);
            assertThat(answer.json().at("/error/code").intValue()).as(headers.toString()).isEqualTo(-32020);
        }
        assertThat(RawHttp.post(open.port(), callTwo(envelope("")), base64Name).status()).isEqualTo(200);
        RawHttp.Answer noEnvelope = RawHttp.post(open.port(), callTwo(null), modernHeaders("tools/call", "execute_code"));
        assertThat(noEnvelope.status()).isEqualTo(400);
        assertThat(noEnvelope.json().at("/error/code").intValue()).isEqualTo(-32602);
        RawHttp.Answer unknownVersion = RawHttp.post(open.port(), callTwo(null), Map.of("MCP-Protocol-Version", "1999-01-01"));
        assertThat(unknownVersion.status()).isEqualTo(400);
    }

    @Test
    void onlyLoopbackAndConfiguredHostsAndOriginsAreAnswered() throws IOException {
        String ping = request(1, "ping", "{}");

        assertThat(RawHttp.post(open.port(), ping, Map.of("Host", "evil.example:80")).status()).isEqualTo(403);
        assertThat(RawHttp.post(open.port(), ping, Map.of("Host", "localhost:" + open.port())).status()).isEqualTo(200);
        assertThat(RawHttp.post(open.port(), ping, Map.of("Host", "[::1]:" + open.port())).status()).isEqualTo(200);
        assertThat(RawHttp.post(open.port(), ping, Map.of("Host", "mcp.example.org")).status()).isEqualTo(200);
        assertThat(RawHttp.post(open.port(), ping, Map.of("Origin", "http://evil.example")).status()).isEqualTo(403);
        assertThat(RawHttp.post(open.port(), ping, Map.of("Origin", "null")).status()).isEqualTo(403);
        assertThat(RawHttp.post(open.port(), ping, Map.of("Origin", "http://localhost:3000")).status()).isEqualTo(200);
    }

    @Test
    void aRequestWithoutAValidTokenIsUnauthorized() throws IOException {
        String ping = request(1, "ping", "{}");
        int port = guarded.port();

        RawHttp.Answer none = RawHttp.post(port, ping, Map.of());
        RawHttp.Answer wrong = RawHttp.post(port, ping, Map.of("Authorization", "Bearer " + TOKEN + "x"));
        RawHttp.Answer basic = RawHttp.post(port, ping, Map.of("Authorization", "Basic " + TOKEN));
        RawHttp.Answer right = RawHttp.post(port, ping, Map.of("Authorization", "Bearer " + TOKEN));

        assertThat(List.of(none.status(), wrong.status(), basic.status())).containsOnly(401);
        assertThat(none.header("WWW-Authenticate")).startsWith("Bearer");
        assertThat(none.body()).doesNotContain(TOKEN);
        assertThat(right.status()).isEqualTo(200);
    }

    @Test
    void limitsAndMethodsAreEnforced() throws IOException {
        String large = request(1, "tools/call", "{\"name\":\"execute_code\",\"arguments\":{\"code\":\""
                + "x".repeat(4096) + "\"}}");
        Map<String, String> auth = Map.of("Authorization", "Bearer " + TOKEN);

        assertThat(RawHttp.post(guarded.port(), large, auth).status()).isEqualTo(413);
        assertThat(RawHttp.send(open.port(), "GET", "/mcp", null, Map.of()).status()).isEqualTo(405);
        assertThat(RawHttp.send(open.port(), "DELETE", "/mcp", null, Map.of()).status()).isEqualTo(405);
        assertThat(RawHttp.send(open.port(), "POST", "/other", "{}", Map.of()).status()).isEqualTo(404);
        assertThat(RawHttp.post(open.port(), "{not json", Map.of()).status()).isEqualTo(400);
        assertThat(RawHttp.post(open.port(), "[" + request(1, "ping", "{}") + "]", Map.of()).status()).isEqualTo(400);
        assertThat(RawHttp.post(open.port(), request(1, "ping", "{}"), Map.of("Content-Type", "text/plain")).status())
                .isEqualTo(415);
    }

    @Test
    void logsGoToTheStreamOfARequestThatAskedForThemAtItsLevel() throws IOException {
        String asked = request(9, "tools/call", "{\"name\":\"invalidate_tool\",\"arguments\":{\"tool\":\"github\"},"
                + envelope(",\"io.modelcontextprotocol/logLevel\":\"info\"") + "}");
        String quiet = request(10, "tools/call", "{\"name\":\"invalidate_tool\",\"arguments\":{\"tool\":\"github\"},"
                + envelope("") + "}");

        List<JsonNode> logged = RawHttp.post(open.port(), asked, modernHeaders("tools/call", "invalidate_tool")).events();
        List<JsonNode> silent = RawHttp.post(open.port(), quiet, modernHeaders("tools/call", "invalidate_tool")).events();

        assertThat(logged).anySatisfy(event -> {
            assertThat(event.get("method").textValue()).isEqualTo("notifications/message");
            assertThat(event.at("/params/level").textValue()).isEqualTo("info");
            assertThat(event.at("/params/data").textValue()).contains("github");
        });
        assertThat(logged.get(logged.size() - 1).at("/result/structuredContent/tool").textValue()).isEqualTo("github");
        assertThat(silent).hasSize(1).noneMatch(event -> event.has("method"));
    }

    @Test
    void aNonLoopbackBindWithoutATokenIsRefused() throws IOException {
        InetAddress any = InetAddress.getByName("0.0.0.0");

        assertThatThrownBy(() -> HttpServeSettings.of(any, 0, List.of(), Set.of(), Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not a loopback address, needs a token");
        assertThatThrownBy(() -> new HttpToken("short", "abc"))
                .hasMessageContaining("shorter than 16")
                .hasMessageNotContaining("abc");
    }

    @Test
    void whileTheAuthorizationServerCannotBeReachedAccessTokensAre503AndStaticTokensStillWork() throws IOException {
        int closed;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closed = socket.getLocalPort();
        }
        String issuer = "http://127.0.0.1:" + closed;
        HttpServeSettings settings = HttpServeSettings.of(InetAddress.getLoopbackAddress(), 0,
                List.of(new HttpToken("agent-a", TOKEN)), Set.of(), Duration.ofSeconds(5))
                .withLimits(1 << 20, 4, Duration.ofSeconds(30)).withOAuth(OAuthSettings.of(URI.create(issuer), null));
        McpHttpServer server = new McpHttpServer(new TestTools().tools, "test",
                settings).start();
        try {
            String ping = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";

            RawHttp.Answer none = RawHttp.post(server.port(), ping, Map.of());
            RawHttp.Answer jwt = RawHttp.post(server.port(), ping, Map.of("Authorization", "Bearer aaaa.bbbb.cccc"));
            RawHttp.Answer fixed = RawHttp.post(server.port(), ping, Map.of("Authorization", "Bearer " + TOKEN));

            assertThat(none.status()).isEqualTo(401);
            assertThat(none.header("WWW-Authenticate")).isEqualTo("Bearer resource_metadata=\"http://127.0.0.1:"
                    + server.port() + "/.well-known/oauth-protected-resource/mcp\", scope=\"execache:read execache:run\"");
            assertThat(jwt.status()).as(jwt.body()).isEqualTo(503);
            assertThat(jwt.header("Retry-After")).isEqualTo("5");
            assertThat(jwt.body()).contains("the metadata of the authorization server " + issuer + " could not be read")
                    .as("says why each place failed").contains("(cannot connect").doesNotContain("(null)");
            assertThat(fixed.status()).as("a static token does not depend on the authorization server").isEqualTo(200);
        } finally {
            server.close();
        }
    }
}
