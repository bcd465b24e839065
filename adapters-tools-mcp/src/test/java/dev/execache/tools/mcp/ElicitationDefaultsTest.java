package dev.execache.tools.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.execache.core.spi.ToolCatalog;
import org.junit.jupiter.api.Test;

class ElicitationDefaultsTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String FORM = """
            {"message":"Your details","requestedSchema":{"type":"object","properties":{
              "name":{"type":"string","default":"John Doe"},
              "age":{"type":"integer","default":30},
              "status":{"type":"string","enum":["active","inactive"],"default":"active"},
              "verified":{"type":"boolean","default":true},
              "note":{"type":"string"}}}}""";

    @Test
    void anAcceptedFormGetsTheDefaultsOfTheFieldsTheAgentLeftOut() throws Exception {
        ToolCatalog.Agent agent = ElicitationDefaults.applying((method, params) ->
                "{\"action\":\"accept\",\"content\":{\"name\":\"Ada\"}}");

        assertThat(JSON.readTree(agent.ask("elicitation/create", FORM))).isEqualTo(JSON.readTree(
                "{\"action\":\"accept\",\"content\":{\"name\":\"Ada\",\"age\":30,\"status\":\"active\",\"verified\":true}}"));
    }

    @Test
    void declinedUrlAndOtherAnswersPassAsTheAgentGaveThem() {
        String declined = "{\"action\":\"decline\"}";
        assertThat(ElicitationDefaults.applying((method, params) -> declined).ask("elicitation/create", FORM))
                .isEqualTo(declined);
        String accepted = "{\"action\":\"accept\"}";
        assertThat(ElicitationDefaults.applying((method, params) -> accepted).ask("elicitation/create",
                "{\"mode\":\"url\",\"url\":\"https://example.com\",\"message\":\"m\",\"elicitationId\":\"1\"}"))
                .isEqualTo(accepted);
        String sampled = "{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"hi\"}}";
        assertThat(ElicitationDefaults.applying((method, params) -> sampled).ask("sampling/createMessage", FORM))
                .isEqualTo(sampled);
        assertThat(ElicitationDefaults.applying(null)).isNull();
    }

    /** The wrapper adds defaults and nothing else: the agent's era, capabilities and rounds reach the server as they are. */
    @Test
    void theWrappedAgentKeepsItsCapabilitiesAndRounds() {
        ToolCatalog.Agent rounds = new ToolCatalog.Agent() {
            @Override
            public String ask(String method, String params) {
                return "{}";
            }

            @Override
            public String capabilities() {
                return "{\"sampling\":{}}";
            }

            @Override
            public boolean asksRounds() {
                return true;
            }

            @Override
            public String givenAnswers() {
                return "{\"requestState\":\"s\"}";
            }

            @Override
            public String askRound(String inputRequests, String requestState) {
                return "{\"k\":" + inputRequests + "}";
            }
        };

        ToolCatalog.Agent wrapped = ElicitationDefaults.applying(rounds);

        assertThat(wrapped.asksRounds()).isTrue();
        assertThat(wrapped.capabilities()).isEqualTo("{\"sampling\":{}}");
        assertThat(wrapped.givenAnswers()).isEqualTo("{\"requestState\":\"s\"}");
        assertThat(wrapped.askRound("1", "s")).isEqualTo("{\"k\":1}");
    }
}
