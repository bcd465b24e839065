package dev.execache.mcp.server;

import dev.execache.gateway.TestTools;

import dev.execache.gateway.Json;
import dev.execache.mcp.server.http.HttpServeSettings;
import dev.execache.mcp.server.http.McpHttpServer;
import dev.execache.mcp.server.stdio.McpStdioServer;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.channels.Channels;
import java.nio.channels.Pipe;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * docs/gateway.md's table "Errors of a malformed request", row by row: the same mistake gets the
 * same error on stdio and over HTTP (with the HTTP status the table gives). One server of each
 * kind, shared by the class.
 */
class MalformedRequestsTest {
    private static final String ENVELOPE = "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
            + "\"io.modelcontextprotocol/clientCapabilities\":{}";
    private static final Map<String, String> MODERN_LIST = Map.of("MCP-Protocol-Version", "2026-07-28",
            "Mcp-Method", "tools/frobnicate");

    private static McpStdioServer stdio;
    private static RawMcpClient client;
    private static McpHttpServer http;

    @BeforeAll
    static void start() throws IOException {
        Pipe toServer = Pipe.open();
        Pipe fromServer = Pipe.open();
        stdio = new McpStdioServer(new TestTools().tools, "test", Channels.newInputStream(toServer.source()),
                Channels.newOutputStream(fromServer.sink()), Duration.ofSeconds(5));
        client = new RawMcpClient(Channels.newOutputStream(toServer.sink()), Channels.newInputStream(fromServer.source()));
        client.initialize();
        http = new McpHttpServer(new TestTools().tools, "test", HttpServeSettings.of(InetAddress.getLoopbackAddress(),
                0, List.of(), Set.of(), Duration.ofSeconds(5))).start();
    }

    @AfterAll
    static void stop() {
        stdio.close();
        http.close();
    }

    /** mistake, message sent, headers on HTTP, code, the message's start, HTTP status. */
    static Stream<Arguments> table() {
        return Stream.of(
                Arguments.of("not JSON", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":", Map.of(),
                        -32700, "Parse error: the ", 400),
                Arguments.of("not JSON-RPC 2.0", "{\"jsonrpc\":\"1.0\",\"id\":2,\"method\":\"ping\"}", Map.of(),
                        -32600, "Invalid Request: ", 400),
                Arguments.of("an id neither a string nor an integer", "{\"jsonrpc\":\"2.0\",\"id\":{\"n\":3},"
                        + "\"method\":\"ping\"}", Map.of(), -32600, "Invalid Request: id must be a string or an integer",
                        400),
                Arguments.of("a method the 2025 era does not have", "{\"jsonrpc\":\"2.0\",\"id\":4,"
                        + "\"method\":\"tools/frobnicate\",\"params\":{}}", Map.of(), -32601,
                        "Method not found: tools/frobnicate", 200),
                Arguments.of("a method the 2026-07-28 era does not have", "{\"jsonrpc\":\"2.0\",\"id\":5,"
                        + "\"method\":\"tools/frobnicate\",\"params\":{\"_meta\":{" + ENVELOPE + "}}}", MODERN_LIST,
                        -32601, "Method not found: tools/frobnicate", 404),
                Arguments.of("params not an object", "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/list\","
                        + "\"params\":[1]}", Map.of(), -32602, "Invalid params: params must be an object", 200),
                Arguments.of("a method's params wrong", "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
                        + "\"params\":{\"name\":5}}", Map.of(), -32602, "Invalid params: params.name", 200),
                Arguments.of("a broken 2026-07-28 envelope", "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/list\","
                        + "\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}", Map.of(),
                        -32602, "Invalid _meta envelope for protocol revision 2026-07-28: ", 400),
                Arguments.of("an envelope naming a version serve does not speak", "{\"jsonrpc\":\"2.0\",\"id\":9,"
                        + "\"method\":\"tools/list\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
                        + "\"2099-01-01\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}", Map.of(),
                        -32022, "Unsupported protocol version: 2099-01-01", 400));
    }

    private static Integer idOf(String message) {
        try {
            JsonNode id = Json.MAPPER.readTree(message).path("id");
            return id.isIntegralNumber() ? id.intValue() : null;
        } catch (IOException e) {
            return null;
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("table")
    void theSameMistakeGetsTheSameErrorOnStdioAndOverHttp(String mistake, String message, Map<String, String> headers,
            int code, String start, int status) throws IOException {
        client.send(message);
        // a message that is not JSON, or whose id is neither a string nor an integer, is answered with id null
        JsonNode overStdio = client.response(idOf(message));
        RawHttp.Answer overHttp = RawHttp.post(http.port(), message, headers);

        for (JsonNode error : List.of(overStdio.get("error"), overHttp.json().get("error"))) {
            assertThat(error.get("code").intValue()).as(error.toString()).isEqualTo(code);
            assertThat(error.get("message").textValue()).startsWith(start);
        }
        assertThat(overHttp.status()).as(overHttp.body()).isEqualTo(status);
        if (code == -32022) {
            assertThat(overStdio.at("/error/data/requested").textValue()).isEqualTo("2099-01-01");
            assertThat(overStdio.at("/error/data/supported").isArray()).isTrue();
            assertThat(overHttp.json().at("/error/data")).isEqualTo(overStdio.at("/error/data"));
        }
    }
}
