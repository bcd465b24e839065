package dev.execache.mcp.server.stdio;

import dev.execache.gateway.InFlightCalls;
import dev.execache.gateway.Json;
import dev.execache.mcp.server.protocol.JsonRpc;
import dev.execache.mcp.server.stdio.StdioTransport;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The stdio framing alone, with a dispatcher that notes what it is handed: each line's message (one that is not
 * JSON-RPC as what is wrong with it, for the dispatcher to answer), a batch's items one by one with their answers
 * gathered into one line, and a batch no negotiated version has answered by the framing itself; at the end of input
 * it waits for the requests still unanswered.
 */
class StdioTransportTest {
    private final ByteArrayOutputStream written = new ByteArrayOutputStream();
    private final List<String> dispatched = new CopyOnWriteArrayList<>();

    private StdioTransport run(String input, StdioTransport.Dispatcher dispatcher) throws Exception {
        StdioTransport transport = new StdioTransport(new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8)),
                written, Duration.ofSeconds(30));
        transport.start(dispatcher, () -> dispatched.add("input ended"));
        transport.ended().get(60, TimeUnit.SECONDS);
        return transport;
    }

    private List<JsonNode> lines() throws Exception {
        List<JsonNode> lines = new CopyOnWriteArrayList<>();
        for (String line : written.toString(StandardCharsets.UTF_8).split("\n")) {
            if (!line.isBlank()) {
                lines.add(Json.MAPPER.readTree(line));
            }
        }
        return lines;
    }

    @Test
    void eachMessageGoesToTheDispatcherAndABatchBeforeItsVersionIsRefusedHere() throws Exception {
        run("""
                {"jsonrpc":"2.0","id":1,"method":"ping"}
                not json
                [{"jsonrpc":"2.0","id":2,"method":"ping"}]
                {"jsonrpc":"2.0","method":"notifications/initialized"}
                """, (line, message, batch) -> dispatched.add(message.getClass().getSimpleName() + " " + line));

        assertThat(dispatched).containsExactly(
                "Request {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
                "Invalid not json",
                "Notification {\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
                "input ended");
        List<JsonNode> answers = lines();
        // no version with batches was negotiated
        assertThat(answers).hasSize(1);
        assertThat(answers.get(0).at("/error/message").textValue())
                .isEqualTo("Invalid Request: batches are part of protocol version 2025-03-26 only, not before initialize");
    }

    @Test
    void aBatchIsAnsweredInOneLineOnceEachOfItsRequestsIsAnswered() throws Exception {
        StdioTransport[] transport = new StdioTransport[1];
        StdioTransport.Dispatcher answering = (line, message, batch) -> {
            if (message instanceof JsonRpc.Invalid invalid) {
                batch.add(invalid.text());
            } else if (message instanceof JsonRpc.Request request) {
                transport[0].pending().add(InFlightCalls.key(request.idValue()), request.method());
                transport[0].answerElsewhere(() -> {
                    transport[0].deliver(request.idValue(), StdioTransport.resultLine(request.idValue(),
                            Json.MAPPER.createObjectNode().put("method", request.method())));
                    transport[0].answered(request.idValue());
                });
            }
        };
        ByteArrayInputStream input = new ByteArrayInputStream("""
                [{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"},3]
                """.getBytes(StandardCharsets.UTF_8));
        transport[0] = new StdioTransport(input, written, Duration.ofSeconds(30));
        transport[0].negotiated("2025-03-26");
        transport[0].start(answering, () -> { });
        transport[0].ended().get(60, TimeUnit.SECONDS);

        List<JsonNode> answers = lines();
        assertThat(answers).hasSize(1);
        assertThat(answers.get(0).isArray()).isTrue();
        assertThat(answers.get(0)).hasSize(3);
        List<String> kinds = new CopyOnWriteArrayList<>();
        answers.get(0).forEach(answer -> kinds.add(answer.has("result") ? answer.get("id") + " "
                + answer.at("/result/method").textValue() : answer.at("/error/code").asText()));
        assertThat(kinds).containsExactlyInAnyOrder("1 ping", "2 tools/list", "-32600");
    }
}
