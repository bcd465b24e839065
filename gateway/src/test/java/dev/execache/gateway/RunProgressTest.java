package dev.execache.gateway;

import dev.execache.gateway.Json;
import dev.execache.gateway.RunProgress;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RunProgressTest {
    private final List<String> sent = new ArrayList<>();
    private final RunProgress progress = new RunProgress("run-1", (method, params) -> sent.add(method + " "
            + Json.write(params)), null, null);

    @Test
    void everyNotificationOfTheRunCountsOneMoreWhateverTheServersCountAndNamesTheTool() {
        progress.progress("lab__steps", step(1, 2, "step 1"));
        progress.running(1);
        progress.progress("lab__steps", step(2, 2, "step 2"));
        progress.progress("other__load", step(1, null, null));
        progress.progress("other__load", step(0.5, 4, " "));

        assertThat(sent).containsExactly(
                "notifications/progress {\"progressToken\":\"run-1\",\"progress\":1,\"message\":\"lab__steps: step 1\"}",
                "notifications/progress {\"progressToken\":\"run-1\",\"progress\":2,\"message\":\"running for 1 s\"}",
                "notifications/progress {\"progressToken\":\"run-1\",\"progress\":3,\"message\":\"lab__steps: step 2\"}",
                "notifications/progress {\"progressToken\":\"run-1\",\"progress\":4,\"message\":\"other__load: 1\"}",
                "notifications/progress {\"progressToken\":\"run-1\",\"progress\":5,\"message\":\"other__load: 0.5/4\"}");
    }

    @Test
    void nothingIsSentOnceTheCallIsAnsweredNorWithoutAToken() {
        progress.answered();
        progress.progress("lab__steps", step(3, 3, "late"));
        progress.running(2);
        List<ObjectNode> untokened = new ArrayList<>();
        RunProgress unasked = new RunProgress(null, (method, params) -> untokened.add(params), null, null);
        unasked.progress("lab__steps", step(1, 1, "step 1"));
        unasked.running(1);

        assertThat(sent).isEmpty();
        assertThat(untokened).isEmpty();
    }

    private static Map<String, Object> step(Number progress, Number total, String message) {
        Map<String, Object> step = new LinkedHashMap<>();
        step.put("progress", progress);
        if (total != null) {
            step.put("total", total);
        }
        if (message != null) {
            step.put("message", message);
        }
        return step;
    }
}
