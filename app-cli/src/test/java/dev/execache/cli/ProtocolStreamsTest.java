package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class ProtocolStreamsTest {

    private static ProtocolStreams streams(String input, ByteArrayOutputStream out, Duration drainLimit) {
        return new ProtocolStreams(new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8)), out,
                new JacksonMcpJsonMapper(new com.fasterxml.jackson.databind.ObjectMapper()), drainLimit);
    }

    private static String readAll(ProtocolStreams streams) throws IOException {
        return new String(streams.input().readAllBytes(), StandardCharsets.UTF_8);
    }

    @Test
    void wellFormedMessagesPassOneALineAndBlankLinesAreSkipped() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ProtocolStreams streams = streams("{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\r\n\n  \n{\"jsonrpc\":\"2.0\",\"method\":\"b\"}",
                out, Duration.ZERO);

        assertThat(readAll(streams)).isEqualTo("{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n{\"jsonrpc\":\"2.0\",\"method\":\"b\"}\n");
        assertThat(out.size()).isZero();
        assertThat(streams.ended()).isDone();
    }

    @Test
    void aLineThatIsNotJsonIsAnsweredWithAParseErrorAndNeverPassed() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ProtocolStreams streams = streams("{oops\n{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n", out, Duration.ZERO);

        assertThat(readAll(streams)).isEqualTo("{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n");
        var error = Output.JSON.readTree(out.toString(StandardCharsets.UTF_8));
        assertThat(error.get("id").isNull()).isTrue();
        assertThat(error.at("/error/code").intValue()).isEqualTo(-32700);
    }

    @Test
    void jsonThatIsNotAMessageIsAnInvalidRequestCarryingItsId() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ProtocolStreams streams = streams("{\"jsonrpc\":\"2.0\",\"id\":\"x-1\"}\n", out, Duration.ZERO);

        assertThat(readAll(streams)).isEmpty();
        var error = Output.JSON.readTree(out.toString(StandardCharsets.UTF_8));
        assertThat(error.get("id").textValue()).isEqualTo("x-1");
        assertThat(error.at("/error/code").intValue()).isEqualTo(-32600);
    }

    @Test
    void theEndOfInputWaitsForUnansweredRequestsAtMostTheDrainLimit() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ProtocolStreams streams = streams("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n", out, Duration.ofMillis(300));

        long start = System.nanoTime();
        readAll(streams);

        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
        assertThat(streams.ended()).isDone();
    }

    @Test
    void anAnsweredRequestDoesNotHoldTheEndOfInput() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ProtocolStreams streams = streams("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n", out, Duration.ofMinutes(5));
        byte[] line = new byte[64];
        int n = streams.input().read(line);
        assertThat(n).isPositive();

        streams.output().write("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n".getBytes(StandardCharsets.UTF_8));

        assertThat(streams.input().read(line)).isEqualTo(-1);
        assertThat(streams.ended()).isDone();
    }

    @Test
    void theIdOfAResponseIsReadFromTheStartOfItsLine() {
        assertThat(id("{\"jsonrpc\":\"2.0\",\"id\":12,\"result\":{\"a\":[1,2]}}")).isEqualTo(ProtocolStreams.idKey(12));
        assertThat(id("{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"error\":{}}")).isEqualTo(ProtocolStreams.idKey("abc"));
        assertThat(id("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":3}")).isNull();
        assertThat(id("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}")).isNull();
        assertThat(id("{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"truncat")).isEqualTo(ProtocolStreams.idKey(7));
    }

    private static String id(String line) {
        byte[] bytes = line.getBytes(StandardCharsets.UTF_8);
        return ProtocolStreams.responseId(bytes, bytes.length);
    }
}
