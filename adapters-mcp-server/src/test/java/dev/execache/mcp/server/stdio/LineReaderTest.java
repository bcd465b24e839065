package dev.execache.mcp.server.stdio;

import dev.execache.mcp.server.stdio.LineReader;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** How stdin is cut into messages: one a line, whatever the reads' boundaries, and none longer than the limit. */
class LineReaderTest {
    private final AtomicInteger tooLong = new AtomicInteger();

    private List<String> lines(InputStream in, int maxLineBytes) throws IOException {
        LineReader reader = new LineReader(in, maxLineBytes, tooLong::incrementAndGet);
        List<String> lines = new ArrayList<>();
        byte[] line;
        while ((line = reader.readLine()) != null) {
            lines.add(new String(line, StandardCharsets.UTF_8));
        }
        return lines;
    }

    /** Hands out its bytes a few at a time, as a pipe may, so that characters and lines fall across reads. */
    private static InputStream trickling(String text, int perRead) {
        return new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8)) {
            @Override
            public synchronized int read(byte[] into, int offset, int length) {
                return super.read(into, offset, Math.min(length, perRead));
            }
        };
    }

    @Test
    void linesSentTogetherAreEachReadWholeWithoutTheirTerminator() throws IOException {
        String text = "{\"a\":1}\n{\"b\":2}\r\n\n{\"c\":3}";

        assertThat(lines(new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8)), 1024))
                .containsExactly("{\"a\":1}", "{\"b\":2}\r", "", "{\"c\":3}");
    }

    @Test
    void aLineLongerThanOneReadWithCharactersAcrossTheReadsIsReadWhole() throws IOException {
        String big = "é".repeat(5000) + "x".repeat(12_000);

        assertThat(lines(trickling(big + "\nnext\n", 3), 1 << 20)).containsExactly(big, "next");
    }

    @Test
    void aLineOverTheLimitIsToldAndSkippedAndTheNextOneIsRead() throws IOException {
        String text = "x".repeat(40_000) + "\n" + "ok\n" + "y".repeat(20) + "\n";

        assertThat(lines(trickling(text, 1000), 16)).containsExactly("", "ok", "");
        assertThat(tooLong).hasValue(2);
    }

    @Test
    void theEndOfInputIsNullAndALastLineWithoutTerminatorCounts() throws IOException {
        assertThat(lines(new ByteArrayInputStream(new byte[0]), 16)).isEmpty();
        assertThat(lines(new ByteArrayInputStream("last".getBytes(StandardCharsets.UTF_8)), 16)).containsExactly("last");
    }
}
