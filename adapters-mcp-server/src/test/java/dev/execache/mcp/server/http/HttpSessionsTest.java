package dev.execache.mcp.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.execache.core.CachePolicy;
import dev.execache.core.StoreGuard;
import dev.execache.core.SwitchableStore;
import dev.execache.gateway.Downstream;
import dev.execache.gateway.Gateway;
import dev.execache.gateway.GatewayPolicy;
import dev.execache.mcp.server.ServeFixture;
import dev.execache.mcp.server.http.HttpServeSettings.HttpToken;
import dev.execache.mcp.server.RawHttp;
import dev.execache.gateway.ServeTools;
import dev.execache.tools.mcp.McpToolCatalog;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Logger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * serve --http with a server behind it keeps a cheap session per 2025-era client: initialize gives its id, a GET opens
 * its stream (one at a time), the server's notifications reach it there, DELETE ends it, another caller cannot use it,
 * an id never opened is not found, and at most 1024 are kept here (the least recently used goes first, open still in
 * the store); execache's own log lines reach it at its level. Its streams begin with a priming event and are resumed
 * with Last-Event-ID, a tool call's with its answer. A client without a session is answered as before.
 */
class HttpSessionsTest {
    private static final String TOKEN_A = "token-of-agent-a-0123456789abcdef";
    private static final String TOKEN_B = "token-of-agent-b-0123456789abcdef";
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path dir;

    private static McpToolCatalog catalog;
    private static McpHttpServer server;
    private static SwitchableStore store;

    @BeforeAll
    static void start() throws IOException {
        ServeFixture fixture = new ServeFixture(dir, Map.of());
        GatewayPolicy policy = new GatewayPolicy(List.of(new GatewayPolicy.Server("lab", false, true)), List.of());
        catalog = new McpToolCatalog(List.of(Downstream.lab("lab", true)), Duration.ofSeconds(60), Duration.ofHours(1),
                line -> { }, Clock.systemUTC()).start();
        store = new SwitchableStore(fixture.store);
        Gateway gateway = Gateway.builder(catalog, StoreGuard.of(store), fixture.versions, policy,
                CachePolicy.DEFAULTS).clock(fixture.clock).build();
        server = new McpHttpServer(ServeTools.builder(fixture.executor, fixture.serveSettings).gateway(gateway).build(),
                "test",
                HttpServeSettings.of(InetAddress.getLoopbackAddress(), 0, List.of(new HttpToken("agent-a", TOKEN_A, true),
                        new HttpToken("agent-b", TOKEN_B, true)), Set.of(), Duration.ofSeconds(5))
                        .withLimits(1 << 20, 16, Duration.ofSeconds(30))).start();
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
        if (catalog != null) {
            catalog.close();
        }
    }

    private static Map<String, String> as(String token, String session) {
        Map<String, String> headers = new HashMap<>();
        headers.put("Authorization", "Bearer " + token);
        if (session != null) {
            headers.put("Mcp-Session-Id", session);
        }
        return headers;
    }

    private static String initialize(String token) throws IOException {
        RawHttp.Answer answer = RawHttp.post(server.port(), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
                + "\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\","
                + "\"version\":\"1\"}}}", as(token, null));
        assertThat(answer.status()).isEqualTo(200);
        assertThat(answer.json().at("/result/capabilities/tools/listChanged").booleanValue()).isTrue();
        return answer.header("Mcp-Session-Id");
    }

    private static RawHttp.Answer call(String token, String session, String tool, String arguments) throws IOException {
        return RawHttp.post(server.port(), "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\""
                + tool + "\",\"arguments\":" + arguments + "}}", with(as(token, session), "Accept", "application/json"));
    }

    private static Map<String, String> with(Map<String, String> headers, String name, String value) {
        Map<String, String> more = new HashMap<>(headers);
        more.put(name, value);
        return more;
    }

    /** The session's GET stream: each data line as it comes. */
    /** Reads the stream's messages into {@code heard} on a thread of its own, which ends with the stream. */
    private static Thread readInto(List<JsonNode> heard, HttpResponse<Stream<String>> opened) {
        Thread reader = new Thread(() -> opened.body().filter(line -> line.startsWith("data: ")).forEach(line -> {
            try {
                heard.add(JSON.readTree(line.substring(6)));
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }));
        reader.setDaemon(true);
        reader.start();
        return reader;
    }

    private static HttpResponse<Stream<String>> stream(String token, String session) throws Exception {
        HttpRequest.Builder get = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/mcp"))
                .header("Accept", "text/event-stream").GET();
        as(token, session).forEach(get::header);
        return HttpClient.newHttpClient().send(get.build(), HttpResponse.BodyHandlers.ofLines());
    }

    @Test
    void aSessionsStreamCarriesTheServersNotificationsAndWhatWaitedForIt() throws Exception {
        String session = initialize(TOKEN_A);
        assertThat(session).matches("[0-9a-f]{32}");
        // sent before the stream is open: it waits for the stream
        RawHttp.Answer changed = call(TOKEN_A, session, "lab__set_description",
                "{\"tool\":\"get_other\",\"description\":\"Another read, changed.\",\"notify\":true}");
        assertThat(changed.json().at("/result/isError").asBoolean(false)).isFalse();

        HttpResponse<Stream<String>> opened = stream(TOKEN_A, session);
        List<JsonNode> heard = new CopyOnWriteArrayList<>();
        Thread reader = readInto(heard, opened);

        assertThat(opened.statusCode()).isEqualTo(200);
        assertThat(opened.headers().firstValue("content-type")).hasValue("text/event-stream");
        await().atMost(Duration.ofMinutes(1)).until(() -> heard.stream()
                .anyMatch(message -> message.path("method").asText().equals("notifications/tools/list_changed")));
        // one stream per session: a second GET is ended at once, the first stays
        HttpResponse<Stream<String>> second = stream(TOKEN_A, session);
        assertThat(second.body().filter(line -> line.startsWith("data: ")).count()).isZero();
        assertThat(reader.isAlive()).isTrue();
        // another caller cannot use the session
        assertThat(stream(TOKEN_B, session).statusCode()).isEqualTo(404);
        assertThat(RawHttp.send(server.port(), "DELETE", "/mcp", null, as(TOKEN_B, session)).status()).isEqualTo(404);
        // DELETE ends it, and its stream with it
        assertThat(RawHttp.send(server.port(), "DELETE", "/mcp", null, as(TOKEN_A, session)).status()).isEqualTo(200);
        reader.join(Duration.ofMinutes(1).toMillis());
        assertThat(reader.isAlive()).isFalse();
        assertThat(RawHttp.send(server.port(), "DELETE", "/mcp", null, as(TOKEN_A, session)).status()).isEqualTo(404);
        // an ended session stays ended: its id is not taken as a new session (the spec's 404)
        assertThat(RawHttp.post(server.port(), "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}",
                as(TOKEN_A, session)).status()).isEqualTo(404);
        assertThat(stream(TOKEN_A, session).statusCode()).isEqualTo(404);
    }

    @Test
    void execachesOwnLogLinesReachASessionAtItsLevel() throws Exception {
        String session = initialize(TOKEN_A);
        RawHttp.Answer level = RawHttp.post(server.port(), "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"logging/setLevel\","
                + "\"params\":{\"level\":\"warning\"}}", as(TOKEN_A, session));
        assertThat(level.json().get("result").isObject()).isTrue();
        HttpResponse<Stream<String>> opened = stream(TOKEN_A, session);
        List<JsonNode> heard = new CopyOnWriteArrayList<>();
        Thread reader = readInto(heard, opened);

        Logger own = Logger.getLogger("dev.execache.store");
        own.info("below the session's level");
        own.warning("the store is unreachable");

        await().atMost(Duration.ofMinutes(1)).until(() -> heard.stream()
                .anyMatch(message -> message.at("/params/data").asText().equals("the store is unreachable")));
        // written in the order logged: the line below the session's level would have come first
        assertThat(heard).filteredOn(message -> message.at("/params/logger").asText().equals("execache")
                        && message.at("/params/data").asText().matches("below the session's level|the store is unreachable"))
                .extracting(message -> message.at("/params/level").asText() + " " + message.at("/params/data").asText())
                .containsExactly("warning the store is unreachable");
        assertThat(RawHttp.send(server.port(), "DELETE", "/mcp", null, as(TOKEN_A, session)).status()).isEqualTo(200);
    }

    @Test
    void aSubscriptionNeedsASessionAndAClientWithoutOneIsAnsweredAsBefore() throws IOException {
        String subscribe = "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/subscribe\",\"params\":{\"uri\":\"x://y\"}}";

        RawHttp.Answer without = RawHttp.post(server.port(), subscribe, as(TOKEN_A, null));
        RawHttp.Answer called = call(TOKEN_A, null, "lab__get_count", "{}");

        assertThat(without.json().at("/error/code").intValue()).isEqualTo(-32600);
        assertThat(without.json().at("/error/message").textValue()).contains("needs a session", "initialize");
        assertThat(called.status()).isEqualTo(200);
        assertThat(called.json().at("/result/content/0/text").textValue()).contains("counter");
        assertThat(GET(null).status()).isEqualTo(405);
    }

    @Test
    void anIdNeverOpenedIsNotFound() throws Exception {
        String madeUp = "0123456789abcdef0123456789abcdef";

        assertThat(RawHttp.post(server.port(), "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}",
                as(TOKEN_A, madeUp)).status()).isEqualTo(404);
        assertThat(stream(TOKEN_A, madeUp).statusCode()).isEqualTo(404);
        assertThat(RawHttp.send(server.port(), "DELETE", "/mcp", null, as(TOKEN_A, madeUp)).status()).isEqualTo(404);
    }

    @Test
    void whileTheStoreFailsTheInstanceGoesByTheSessionsItKnows() throws Exception {
        String known = initialize(TOKEN_A);
        String ended = initialize(TOKEN_A);
        assertThat(RawHttp.send(server.port(), "DELETE", "/mcp", null, as(TOKEN_A, ended)).status()).isEqualTo(200);
        String ping = "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}";
        String unknown = "00000000000000000000000000000001";
        store.fail(true);
        try {
            assertThat(initialize(TOKEN_A)).matches("[0-9a-f]{32}");
            assertThat(RawHttp.post(server.port(), ping, as(TOKEN_A, known)).status()).isEqualTo(200);
            assertThat(RawHttp.post(server.port(), ping, as(TOKEN_B, known)).status()).isEqualTo(404);
            assertThat(RawHttp.post(server.port(), ping, as(TOKEN_A, ended)).status()).isEqualTo(404);
            assertThat(RawHttp.post(server.port(), ping, as(TOKEN_A, unknown)).status())
                    .as("an id it does not know: taken as a session of its caller").isEqualTo(200);
        } finally {
            store.fail(false);
        }
        // the store answers again, and knows no such session
        assertThat(RawHttp.post(server.port(), ping, as(TOKEN_A, unknown)).status()).isEqualTo(404);
        assertThat(RawHttp.post(server.port(), ping, as(TOKEN_A, known)).status()).isEqualTo(200);
    }

    @Test
    void atMost1024SessionsAreKeptHereTheLeastRecentlyUsedGoesFirstAndStaysOpenInTheStore() throws IOException {
        String oldest = initialize(TOKEN_B);
        String used = initialize(TOKEN_B);
        for (int i = 0; i < 1022; i++) {
            initialize(TOKEN_B);
        }
        // used again, so the oldest is the least recently used when one more comes
        call(TOKEN_B, used, "lab__get_count", "{}");
        initialize(TOKEN_B);

        assertThat(server.sessionsKept()).isEqualTo(1024);
        // what this instance kept of it went; the store still knows it, and whose it is, as for another instance's
        assertThat(RawHttp.send(server.port(), "DELETE", "/mcp", null, as(TOKEN_A, oldest)).status()).isEqualTo(404);
        assertThat(RawHttp.send(server.port(), "DELETE", "/mcp", null, as(TOKEN_B, oldest)).status()).isEqualTo(200);
        assertThat(RawHttp.send(server.port(), "DELETE", "/mcp", null, as(TOKEN_B, used)).status()).isEqualTo(200);
        assertThat(server.sessionsKept()).isLessThanOrEqualTo(1023);
    }

    @Test
    void aToolCallsStreamThatBrokeBeforeItsAnswerIsResumedWithTheAnswer() throws Exception {
        String session = initialize(TOKEN_A);
        String body = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"lab__sleep\","
                + "\"arguments\":{\"ms\":1500}}}";
        String priming;
        String retry;
        try (Socket socket = new Socket("127.0.0.1", server.port())) {
            socket.getOutputStream().write(("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:" + server.port()
                    + "\r\nAuthorization: Bearer " + TOKEN_A + "\r\nMcp-Session-Id: " + session
                    + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                    + "Content-Length: " + body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + body)
                    .getBytes(StandardCharsets.UTF_8));
            BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            String line;
            while ((line = in.readLine()) != null && !line.startsWith("id: ")) {
                // the status line and headers
            }
            priming = line;
            retry = in.readLine();
        }
        // the connection broke before the answer came; the client resumes where it stopped
        HttpRequest.Builder get = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/mcp"))
                .header("Accept", "text/event-stream").header("Last-Event-ID", priming.substring(4)).GET();
        as(TOKEN_A, session).forEach(get::header);
        HttpResponse<Stream<String>> resumed = HttpClient.newHttpClient().send(get.build(),
                HttpResponse.BodyHandlers.ofLines());
        List<String> lines = new CopyOnWriteArrayList<>();
        Thread reader = new Thread(() -> resumed.body().forEach(lines::add));
        reader.setDaemon(true);
        reader.start();
        reader.join(Duration.ofMinutes(1).toMillis());

        assertThat(reader.isAlive()).as("the resumed stream ends with the answer").isFalse();
        assertThat(priming).matches("id: [0-9a-f]+-0");
        assertThat(retry).isEqualTo("retry: 1000");
        assertThat(resumed.statusCode()).isEqualTo(200);
        assertThat(lines).filteredOn(line -> line.startsWith("data: ")).singleElement().satisfies(line -> {
            JsonNode answer = JSON.readTree(line.substring(6));
            assertThat(answer.path("id").intValue()).isEqualTo(7);
            assertThat(answer.at("/result/content/0/text").textValue()).contains("\"slept\":1500");
        });
        assertThat(lines).contains("id: " + priming.substring(4, priming.length() - 1) + "1");
        assertThat(RawHttp.send(server.port(), "DELETE", "/mcp", null, as(TOKEN_A, session)).status()).isEqualTo(200);
    }

    @Test
    void aSessionsStreamBeginsWithAPrimingEventAndIsResumedFromTheLastEventItsClientGot() throws Exception {
        String session = initialize(TOKEN_A);
        RawHttp.Answer changed = call(TOKEN_A, session, "lab__set_description",
                "{\"tool\":\"get_other\",\"description\":\"Another read, changed again.\",\"notify\":true}");
        assertThat(changed.json().at("/result/isError").asBoolean(false)).isFalse();
        HttpResponse<Stream<String>> first = stream(TOKEN_A, session);
        List<String> lines = new CopyOnWriteArrayList<>();
        Thread reader = new Thread(() -> first.body().forEach(lines::add));
        reader.setDaemon(true);
        reader.start();
        await().atMost(Duration.ofMinutes(1)).until(() -> lines.stream().anyMatch(line -> line.contains("list_changed")));
        String priming = lines.get(0);
        String listChanged = lines.get(lines.indexOf(lines.stream().filter(line -> line.contains("list_changed"))
                .findFirst().orElseThrow()) - 2);

        // a client that lost the stream after the priming event: the list change again, the stream taken over
        HttpRequest.Builder get = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/mcp"))
                .header("Accept", "text/event-stream").header("Last-Event-ID", priming.substring(4)).GET();
        as(TOKEN_A, session).forEach(get::header);
        HttpResponse<Stream<String>> resumed = HttpClient.newHttpClient().send(get.build(),
                HttpResponse.BodyHandlers.ofLines());
        List<String> again = new CopyOnWriteArrayList<>();
        Thread resumedReader = new Thread(() -> resumed.body().forEach(again::add));
        resumedReader.setDaemon(true);
        resumedReader.start();
        await().atMost(Duration.ofMinutes(1)).until(() -> again.stream().anyMatch(line -> line.contains("list_changed")));

        assertThat(priming).matches("id: [0-9a-f]+-\\d+");
        assertThat(lines.get(1)).isEqualTo("retry: 1000");
        assertThat(listChanged).startsWith("id: " + priming.substring(4, priming.lastIndexOf('-') + 1));
        assertThat(again).contains(listChanged);
        reader.join(Duration.ofMinutes(1).toMillis());
        assertThat(reader.isAlive()).as("the stream resumed elsewhere ends here").isFalse();
        assertThat(RawHttp.send(server.port(), "DELETE", "/mcp", null, as(TOKEN_A, session)).status()).isEqualTo(200);
    }

    private static RawHttp.Answer GET(String session) throws IOException {
        return RawHttp.send(server.port(), "GET", "/mcp", null, with(as(TOKEN_A, session), "Accept", "text/event-stream"));
    }
}
