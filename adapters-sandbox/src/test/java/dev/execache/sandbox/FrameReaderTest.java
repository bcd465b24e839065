package dev.execache.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class FrameReaderTest {
    private static final String SECRET = "0123456789abcdef0123456789abcdeg";

    private static String frame(char kind, String payload) {
        return SECRET + kind + payload.getBytes(StandardCharsets.UTF_8).length + "\n" + payload + SECRET;
    }

    private static FrameReader.Outcome read(String stream, long consoleBound) throws IOException {
        return new FrameReader(SECRET.getBytes(StandardCharsets.US_ASCII), consoleBound, 1000)
                .read(new OneByteAtATime(stream.getBytes(StandardCharsets.UTF_8)));
    }

    private static String console(FrameReader.Outcome outcome) {
        return new String(outcome.console(), StandardCharsets.UTF_8);
    }

    @Test
    void framesAreTakenOutOfTheConsoleEvenWhenSplitAcrossReads() throws IOException {
        FrameReader.Outcome outcome = read(frame('a', "") + "hello\n" + frame('v', "{\"a\":1}") + "after", 1000);

        assertThat(outcome.ending()).isEqualTo(FrameReader.Ending.FRAME);
        assertThat(outcome.acknowledged()).isTrue();
        assertThat(outcome.kind()).isEqualTo(FrameReader.Kind.VALUE);
        assertThat(new String(outcome.payload(), StandardCharsets.UTF_8)).isEqualTo("{\"a\":1}");
        assertThat(console(outcome)).isEqualTo("hello\n");
    }

    @Test
    void aPartialSecretInTheConsoleIsKeptAsConsole() throws IOException {
        String almost = SECRET.substring(0, 20) + "0123456789abcdef0123" + SECRET.substring(0, 31) + "!";

        FrameReader.Outcome outcome = read(frame('a', "") + almost + frame('v', "1"), 1000);

        assertThat(outcome.ending()).isEqualTo(FrameReader.Ending.FRAME);
        assertThat(console(outcome)).isEqualTo(almost);
    }

    @Test
    void aFrameThatDoesNotEndWithTheSecretIsCorrupt() throws IOException {
        String interleaved = SECRET + "v3\n1" + "xx" + "23" + SECRET;

        assertThat(read(interleaved, 1000).ending()).isEqualTo(FrameReader.Ending.CORRUPT);
    }

    @Test
    void aValueFrameOverTheResultBoundIsNotRead() throws IOException {
        assertThat(read(SECRET + "v999999999\n", 1000).ending()).isEqualTo(FrameReader.Ending.RESULT_LIMIT);
    }

    @Test
    void theConsoleStopsAtItsBound() throws IOException {
        FrameReader.Outcome outcome = read("x".repeat(5000), 100);

        assertThat(outcome.ending()).isEqualTo(FrameReader.Ending.OUTPUT_LIMIT);
        assertThat(outcome.console()).hasSize(100);
    }

    @Test
    void theEndOfTheStreamKeepsWhatWasHeldBack() throws IOException {
        FrameReader.Outcome outcome = read("out " + SECRET.substring(0, 10), 1000);

        assertThat(outcome.ending()).isEqualTo(FrameReader.Ending.END_OF_STREAM);
        assertThat(outcome.acknowledged()).isFalse();
        assertThat(console(outcome)).isEqualTo("out " + SECRET.substring(0, 10));
    }

    /** Hands out one byte per read, the worst case for a frame split across reads. */
    private static final class OneByteAtATime extends InputStream {
        private final ByteArrayInputStream in;

        OneByteAtATime(byte[] bytes) {
            in = new ByteArrayInputStream(bytes);
        }

        @Override
        public int read() {
            return in.read();
        }

        @Override
        public int read(byte[] b, int off, int len) {
            return in.read(b, off, Math.min(1, len));
        }
    }

    @Test
    void theRunnerNamesTheSameFrameKindsAnswerKindsAndSecretLength() throws IOException {
        String runner = new String(DenoRuntime.runnerScript(), StandardCharsets.UTF_8);
        Matcher kinds = Pattern.compile("const FRAME = \\{([^}]*)\\};").matcher(runner);
        assertThat(kinds.find()).as("runner.js defines FRAME").isTrue();
        Map<String, Character> named = new TreeMap<>();
        Matcher entry = Pattern.compile("(\\w+): \"(.)\"").matcher(kinds.group(1));
        while (entry.find()) {
            named.put(entry.group(1), entry.group(2).charAt(0));
        }
        Map<String, Character> ours = new TreeMap<>();
        for (FrameReader.Kind kind : FrameReader.Kind.values()) {
            ours.put(kind.name(), kind.code);
        }

        assertThat(named).isEqualTo(ours);
        assertThat(runner).contains("const SECRET_LENGTH = " + Runner.SECRET_LENGTH + ";");
        assertThat(runner).contains("const REALMS_HOOK = \"" + OtherRealms.HOOK + "\";");

        Matcher answers = Pattern.compile("const ANSWER = \\{([^}]*)\\};").matcher(runner);
        assertThat(answers.find()).as("runner.js defines ANSWER").isTrue();
        Map<String, Character> namedAnswers = new TreeMap<>();
        Matcher answer = Pattern.compile("(\\w+): \"(.)\"").matcher(answers.group(1));
        while (answer.find()) {
            namedAnswers.put(answer.group(1), answer.group(2).charAt(0));
        }
        Map<String, Character> ourAnswers = new TreeMap<>();
        for (FrameReader.Answer kind : FrameReader.Answer.values()) {
            ourAnswers.put(kind.name(), kind.code);
        }
        assertThat(namedAnswers).isEqualTo(ourAnswers);
    }
}
