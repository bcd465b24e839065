package dev.execache.tools.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.core.spi.ToolCatalog;
import java.io.IOException;
import java.util.Map;

/**
 * The agent's answer to a form elicitation, completed with the defaults of the fields it left out: the spec has a
 * client that supports defaults pre-populate its form with them (2025-11-25, elicitation), so the server gets what a
 * person accepting the form unchanged would send. In both eras, for command and url servers alike.
 */
final class ElicitationDefaults {
    private static final ObjectMapper JSON = new ObjectMapper();

    private ElicitationDefaults() {
    }

    /** {@code agent}, its accepted form elicitations completed with the schema's defaults; null stays null. */
    static ToolCatalog.Agent applying(ToolCatalog.Agent agent) {
        if (agent == null) {
            return null;
        }
        // every other question goes to the agent as it is: a round (2026-07-28) is the agent's to answer whole
        return new ToolCatalog.ForwardingAgent(agent) {
            @Override
            public String ask(String method, String params) {
                String answer = super.ask(method, params);
                return "elicitation/create".equals(method) ? completed(params, answer) : answer;
            }
        };
    }

    static String completed(String params, String answer) {
        try {
            JsonNode asked = JSON.readTree(params);
            JsonNode given = JSON.readTree(answer);
            if (!"accept".equals(given.path("action").asText()) || !"form".equals(asked.path("mode").asText("form"))
                    || !asked.path("requestedSchema").path("properties").isObject()) {
                return answer;
            }
            ObjectNode result = (ObjectNode) given;
            ObjectNode content = result.path("content").isObject() ? (ObjectNode) result.get("content")
                    : result.putObject("content");
            boolean added = false;
            for (Map.Entry<String, JsonNode> field : asked.path("requestedSchema").path("properties").properties()) {
                JsonNode fallback = field.getValue().get("default");
                if (fallback != null && !fallback.isNull() && !content.has(field.getKey())) {
                    content.set(field.getKey(), fallback);
                    added = true;
                }
            }
            return added ? JSON.writeValueAsString(result) : answer;
        } catch (IOException | ClassCastException e) {
            // not the shapes the spec gives: passed on as the agent gave it, for the server to judge
            return answer;
        }
    }
}
