package dev.execache.mcp.server;

import dev.execache.gateway.TestTools;
import dev.execache.gateway.ScriptedCatalog;

import dev.execache.mcp.server.stdio.McpStdioServer;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.core.spi.ToolCatalog.ServerStatus;
import dev.execache.core.spi.ToolCatalog.ServerStatus.State;
import java.io.IOException;
import java.nio.channels.Channels;
import java.nio.channels.Pipe;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A call of a tool of a server that cannot start says why, not only that the tool is unknown. */
class UnavailableServerTest {
    private McpStdioServer server;
    private RawMcpClient client;

    @BeforeEach
    void start() throws IOException {
        ScriptedCatalog catalog = new ScriptedCatalog();
        catalog.servers = List.of(new ServerStatus("broken", State.UNAVAILABLE,
                "cannot start /nonexistent/bin/thing: No such file or directory", 0),
                new ServerStatus("remote", State.UNAVAILABLE, "server remote cannot be reached at"
                        + " http://127.0.0.1:1/mcp (connection refused)", 0));
        Pipe toServer = Pipe.open();
        Pipe fromServer = Pipe.open();
        server = new McpStdioServer(new TestTools(catalog, List.of("broken", "remote")).tools, "test",
                Channels.newInputStream(toServer.source()), Channels.newOutputStream(fromServer.sink()),
                Duration.ofSeconds(5));
        client = new RawMcpClient(Channels.newOutputStream(toServer.sink()), Channels.newInputStream(fromServer.source()));
        client.initialize();
    }

    @AfterEach
    void stop() {
        server.close();
    }

    @Test
    void aToolOfAServerThatCannotStartIsUnknownWithTheReason() {
        JsonNode answer = client.request("tools/call", Map.of("name", "broken__search", "arguments", Map.of()));

        assertThat(answer.at("/error/code").intValue()).isEqualTo(-32602);
        assertThat(answer.at("/error/message").textValue()).isEqualTo("Unknown tool: broken__search (server broken is"
                + " not available: cannot start /nonexistent/bin/thing: No such file or directory)");
    }

    @Test
    void aUrlServersReasonIsNotNamedTwice() {
        JsonNode answer = client.request("tools/call", Map.of("name", "remote__search", "arguments", Map.of()));

        assertThat(answer.at("/error/message").textValue()).isEqualTo("Unknown tool: remote__search (server remote is"
                + " not available: cannot be reached at http://127.0.0.1:1/mcp (connection refused))");
    }

    @Test
    void aToolOfNoServerIsUnknown() {
        JsonNode answer = client.request("tools/call", Map.of("name", "other__search", "arguments", Map.of()));

        assertThat(answer.at("/error/message").textValue()).isEqualTo("Unknown tool: other__search");
    }
}
