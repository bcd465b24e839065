package dev.execache.tools.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.execache.core.ToolResult;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
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
}
