package dev.execache.tools.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.execache.core.ToolResult;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** A url server (answering JSON, not streams) that goes down and comes back on the same port. */
class UrlServerComesBackTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);
    private static HttpLab lab;

    @BeforeAll
    static void startLab() throws IOException {
        lab = HttpLab.start("--era", "2025", "--json");
    }

    @AfterAll
    static void stopLab() throws InterruptedException {
        lab.close();
    }

    private static String text(ToolResult result) throws IOException {
        return JSON.readTree(result.json()).at("/content/0/text").textValue();
    }

    @Test
    void aCallWhileTheServerIsDownIsAnErrorAndTheServerIsReachedAgainWhenItIsBack() throws Exception {
        try (McpToolCatalog catalog = new McpToolCatalog(
                List.of(new UrlServerSettings("flaky", lab.url(), Map.of(), true)), CALL_TIMEOUT, Duration.ofHours(1),
                line -> { }, Clock.systemUTC()).start()) {
            ToolResult before = catalog.call("flaky__get_count", Map.of());

            lab.stop();
            ToolResult whileDown = catalog.call("flaky__get_count", Map.of());
            lab.startAgain();
            ToolResult after = catalog.call("flaky__get_count", Map.of());

            assertThat(before.isError()).as(before.json()).isFalse();
            assertThat(whileDown.isError()).isTrue();
            assertThat(text(whileDown)).contains("server flaky cannot be reached");
            assertThat(after.isError()).as(after.json()).isFalse();
            JsonNode counted = JSON.readTree(text(after));
            assertThat(counted.get("served").intValue()).as("a new process counts from one").isEqualTo(1);
        }
    }

    @Test
    void aFailureIsSaidOnceWhileRetriesFailTheSameWayAndAgainAfterTheServerWasBack() throws Exception {
        List<LogRecord> records = new CopyOnWriteArrayList<>();
        try (Recording recording = new Recording(records);
                McpToolCatalog catalog = new McpToolCatalog(
                List.of(new UrlServerSettings("flaky", lab.url(), Map.of(), true)), CALL_TIMEOUT, Duration.ofHours(1),
                line -> { }, Clock.systemUTC()).start()) {
            assertThat(catalog.call("flaky__get_count", Map.of()).isError()).isFalse();

            lab.stop();
            catalog.call("flaky__get_count", Map.of());
            await().atMost(Duration.ofSeconds(30)).until(() -> unreachable(records, null) >= 3);
            assertThat(unreachable(records, Level.WARNING)).as("said once, the retries at 1 and 2 s at debug level")
                    .isEqualTo(1);

            lab.startAgain();
            await().atMost(Duration.ofSeconds(30)).until(() -> !catalog.call("flaky__get_count", Map.of()).isError());
            lab.stop();
            catalog.call("flaky__get_count", Map.of());
            await().atMost(Duration.ofSeconds(30)).until(() -> unreachable(records, Level.WARNING) == 2);
        } finally {
            lab.startAgain();
        }
    }

    @Test
    void aHostNameThatDoesNotResolveIsSaidSoNotRefused() throws Exception {
        try (McpToolCatalog catalog = new McpToolCatalog(
                List.of(new UrlServerSettings("nowhere", URI.create("http://no-such-host.invalid/mcp"), Map.of(), true)),
                CALL_TIMEOUT, Duration.ofHours(1), line -> { }, Clock.systemUTC()).start()) {
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(catalog.servers())
                    .anySatisfy(state -> assertThat(String.valueOf(state.reason()))
                            .contains("server nowhere cannot be reached at http://no-such-host.invalid/mcp"
                                    + " (host no-such-host.invalid not found)")
                            .doesNotContain("refused")));
        }
    }

    /** The records about server flaky not being reached, at {@code level} (null: at any). */
    private static long unreachable(List<LogRecord> records, Level level) {
        return records.stream().filter(record -> record.getMessage().contains("server flaky cannot be reached"))
                .filter(record -> level == null || record.getLevel().equals(level)).count();
    }

    /** What the module logs, at every level, while it is open. */
    private static final class Recording extends Handler implements AutoCloseable {
        private final Logger logger = Logger.getLogger("dev.execache.tools.mcp");
        private final Level before = logger.getLevel();
        private final List<LogRecord> records;

        Recording(List<LogRecord> records) {
            this.records = records;
            logger.setLevel(Level.ALL);
            logger.addHandler(this);
        }

        @Override
        public void publish(LogRecord record) {
            records.add(record);
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
            logger.removeHandler(this);
            logger.setLevel(before);
        }
    }
}
