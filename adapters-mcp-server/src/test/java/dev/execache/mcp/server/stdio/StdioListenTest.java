package dev.execache.mcp.server.stdio;

import dev.execache.mcp.server.protocol.SubscribedUris;
import dev.execache.mcp.server.protocol.NotificationStream;
import dev.execache.mcp.server.protocol.ListenStreams;
import dev.execache.gateway.Gateway;
import dev.execache.mcp.server.RawMcpClient;
import dev.execache.gateway.TestTools;
import dev.execache.gateway.Json;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.core.ToolResult;
import dev.execache.core.spi.CatalogTool;
import dev.execache.core.spi.ServerRefusedException;
import dev.execache.core.spi.ToolCatalog;
import java.io.IOException;
import java.nio.channels.Channels;
import java.nio.channels.Pipe;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A 2026-07-28 agent on stdio listens ({@code subscriptions/listen}) for what the servers behind execache send outside
 * an answer, as it does over HTTP: the stream's messages are lines of the session's output, tagged with the listen
 * request's id; the agent's cancel ends it (the server is told its resource is no longer subscribed to), and serve
 * stopping ends it with an empty result. The servers are a catalog that offers one resource.
 */
class StdioListenTest {
    private static final String README = "lab://notes/readme";
    private static final Map<String, Object> ENVELOPE = Map.of(
            "io.modelcontextprotocol/protocolVersion", "2026-07-28",
            "io.modelcontextprotocol/clientInfo", Map.of("name", "raw", "version", "1"),
            "io.modelcontextprotocol/clientCapabilities", Map.of());

    private final ResourceLab lab = new ResourceLab();
    private McpStdioServer server;
    private RawMcpClient client;

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    private void start(ToolCatalog catalog) throws IOException {
        Pipe toServer = Pipe.open();
        Pipe fromServer = Pipe.open();
        server = new McpStdioServer(new TestTools(catalog, List.of("lab")).tools, "test",
                Channels.newInputStream(toServer.source()), Channels.newOutputStream(fromServer.sink()),
                Duration.ofSeconds(5));
        client = new RawMcpClient(Channels.newOutputStream(toServer.sink()), Channels.newInputStream(fromServer.source()));
    }

    @Test
    void aListenGetsWhatItAskedForUntilTheAgentCancelsIt() throws IOException {
        start(lab);
        JsonNode capabilities = client.request("server/discover", Map.of("_meta", ENVELOPE)).at("/result/capabilities");
        assertThat(capabilities.at("/tools/listChanged").booleanValue()).isTrue();
        assertThat(capabilities.at("/resources/listChanged").booleanValue()).isTrue();
        assertThat(capabilities.at("/resources/subscribe").booleanValue()).isTrue();

        client.send(listen("listen:1", Map.of("toolsListChanged", true, "resourcesListChanged", true,
                "resourceSubscriptions", List.of(README, "lab://nowhere"))));

        JsonNode acknowledged = notification("notifications/subscriptions/acknowledged");
        assertThat(acknowledged.at("/params/_meta/io.modelcontextprotocol~1subscriptionId").textValue())
                .isEqualTo("listen:1");
        // a URI no server lists is left out; the prompts' list was not asked for
        assertThat(acknowledged.at("/params/notifications")).isEqualTo(Json.MAPPER.valueToTree(Map.of(
                "toolsListChanged", true, "resourcesListChanged", true, "resourceSubscriptions", List.of(README))));
        assertThat(lab.asked).containsExactly("resources/subscribe " + README);

        lab.send("notifications/prompts/list_changed", Map.of());
        lab.send("notifications/resources/updated", Map.of("uri", "lab://notes/other"));
        lab.send("notifications/resources/updated", Map.of("uri", README));
        lab.send("notifications/resources/list_changed", Map.of());

        JsonNode updated = notification("notifications/resources/updated");
        assertThat(updated.at("/params/uri").textValue()).isEqualTo(README);
        assertThat(updated.at("/params/_meta/io.modelcontextprotocol~1subscriptionId").textValue()).isEqualTo("listen:1");
        assertThat(notification("notifications/resources/list_changed")
                .at("/params/_meta/io.modelcontextprotocol~1subscriptionId").textValue()).isEqualTo("listen:1");

        client.send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"listen:1\"}}");
        Awaitility.await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertThat(lab.asked).contains("resources/unsubscribe " + README));
        lab.send("notifications/resources/updated", Map.of("uri", README));
        // the lab's notifications are written as they are sent: everything before this answer is in
        client.request("ping", Map.of("_meta", ENVELOPE));

        // nothing more on the stream, nothing it did not ask for, and no answer to the cancelled listen
        assertThat(client.unclaimed()).isEmpty();
    }

    @Test
    void whatAServerSendsTheMomentAListenIsAcknowledgedFollowsTheAcknowledgement() {
        Gateway gateway = new TestTools(lab, List.of("lab")).tools.gateway();
        gateway.features().offered();
        ListenStreams listens = new ListenStreams(gateway, new SubscribedUris(gateway));
        gateway.onNotification(listens::notified);
        List<String> written = new CopyOnWriteArrayList<>();
        NotificationStream stream = new NotificationStream() {
            @Override
            public boolean send(String json) {
                written.add(json);
                if (json.contains("notifications/subscriptions/acknowledged")) {
                    // the agent has the acknowledgement: the server's update comes now
                    lab.send("notifications/resources/updated", Map.of("uri", README));
                }
                return true;
            }

            @Override
            public boolean keepAlive() {
                return true;
            }

            @Override
            public void end(String lastJson) {
            }

            @Override
            public boolean isOpen() {
                return true;
            }
        };

        listens.listen(Json.MAPPER.valueToTree("listen:1"),
                Json.MAPPER.valueToTree(Map.of("resourceSubscriptions", List.of(README))), stream);

        assertThat(written).hasSize(2);
        assertThat(written.get(0)).contains("notifications/subscriptions/acknowledged");
        assertThat(written.get(1)).contains("notifications/resources/updated").contains(README);
    }

    @Test
    void aListenEndsWithAnEmptyResultWhenServeStops() throws IOException {
        start(lab);
        client.send(listen("7", Map.of("toolsListChanged", true)));
        notification("notifications/subscriptions/acknowledged");

        server.close();

        JsonNode ended = client.response("7");
        assertThat(ended.at("/result/resultType").textValue()).isEqualTo("complete");
        assertThat(ended.at("/result/_meta/io.modelcontextprotocol~1subscriptionId").textValue()).isEqualTo("7");
    }

    @Test
    void withoutServersThereIsNothingToListenFor() throws IOException {
        start(null);

        client.send(listen("listen:1", Map.of("toolsListChanged", true)));

        JsonNode refused = client.response("listen:1");
        assertThat(refused.at("/error/code").intValue()).isEqualTo(-32601);
        assertThat(refused.at("/error/message").textValue()).contains("no servers are configured under servers:");
    }

    private static String listen(String id, Map<String, Object> filter) {
        ObjectNode request = Json.MAPPER.createObjectNode();
        request.put("jsonrpc", "2.0");
        request.put("id", id);
        request.put("method", "subscriptions/listen");
        request.set("params", Json.MAPPER.valueToTree(Map.of("notifications", filter, "_meta", ENVELOPE)));
        return Json.write(request);
    }

    /** The next notification of {@code method}: a message without an id, claimed by its method. */
    private JsonNode notification(String method) {
        return client.next(message -> method.equals(message.path("method").asText()), method);
    }

    /** One server, lab, that offers one resource and says when it is told to subscribe. */
    private static final class ResourceLab implements ToolCatalog {
        final List<String> asked = new CopyOnWriteArrayList<>();
        private final List<NotificationListener> listeners = new CopyOnWriteArrayList<>();

        void send(String method, Map<String, Object> params) {
            listeners.forEach(listener -> listener.notified("lab", method, params));
        }

        @Override
        public List<CatalogTool> tools() {
            return List.of();
        }

        @Override
        public ToolResult call(String tool, Map<String, Object> args) {
            throw new IllegalStateException("the lab has no tools");
        }

        @Override
        public Map<String, Set<String>> features() {
            return Map.of("lab", Set.of("resources"));
        }

        @Override
        public String ask(String server, String method, String params) {
            return switch (method) {
                case "resources/list" -> "{\"resources\":[{\"uri\":\"" + README + "\",\"name\":\"readme\"}]}";
                case "resources/templates/list" -> "{\"resourceTemplates\":[]}";
                case "resources/subscribe", "resources/unsubscribe" -> {
                    asked.add(method + " " + uri(params));
                    yield "{}";
                }
                default -> throw new ServerRefusedException(-32601, "Method not found: " + method);
            };
        }

        private static String uri(String params) {
            try {
                return Json.MAPPER.readTree(params).path("uri").asText();
            } catch (IOException e) {
                throw new IllegalArgumentException(e);
            }
        }

        @Override
        public void addListener(Listener listener) {
        }

        @Override
        public void addNotificationListener(NotificationListener listener) {
            listeners.add(listener);
        }

        @Override
        public void close() {
        }
    }
}
