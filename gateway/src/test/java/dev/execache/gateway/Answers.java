package dev.execache.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.core.ExecutionOutcome;
import dev.execache.core.ToolResult;
import java.io.IOException;

/** What a lab tool or a run answered, as JSON to assert on. */
final class Answers {
    private Answers() {
    }

    /** The JSON a lab tool answered in its text content. */
    static JsonNode ofTool(ToolResult result) {
        try {
            return Json.MAPPER.readTree(Json.MAPPER.readTree(result.json()).at("/content/0/text").textValue());
        } catch (IOException e) {
            throw new AssertionError("not a tool result: " + result.json(), e);
        }
    }

    /** The value a run returned; the run must have succeeded. */
    static JsonNode ofRun(ExecutionOutcome outcome) throws IOException {
        assertThat(outcome.result().error()).isNull();
        return Json.MAPPER.readTree(outcome.result().value());
    }
}
