package dev.execache.gateway;

import dev.execache.gateway.Json;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.TextContent;
import io.modelcontextprotocol.spec.McpSchema.Tool;
import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ServeToolsTest {
    private TestTools fixture;
    private Map<String, OfferedTool> tools;

    @BeforeEach
    void setUp() {
        fixture = new TestTools();
        tools = fixture.tools.specifications().stream()
                .collect(Collectors.toMap(spec -> spec.tool().name(), Function.identity(), (a, b) -> a, LinkedHashMap::new));
    }

    private CallToolResult call(String tool, Map<String, Object> arguments) {
        return tools.get(tool).call(
                CallToolRequest.builder(tool).arguments(arguments).build(), RequestOrigin.UNKNOWN);
    }

    /** The structured content as a client reads it: written and read back (a result travels as raw JSON). */
    private static JsonNode structured(CallToolResult result) {
        try {
            return Json.MAPPER.readTree(Json.MAPPER.writeValueAsString(result.structuredContent()));
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    /** A tool error's facts, which travel as JSON text (no structured content: that is for results). */
    private static JsonNode errorFacts(CallToolResult result) {
        assertThat(result.structuredContent()).isNull();
        try {
            return Json.MAPPER.readTree(text(result));
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    private static String text(CallToolResult result) {
        return ((TextContent) result.content().get(0)).text();
    }

    @Test
    void theFourToolsAreOffered() {
        assertThat(tools).containsOnlyKeys("execute_code", "cache_stats", "invalidate_tool", "clear_cache");
    }

    @Test
    void executeIsAMissThenAHitCarryingValueTimesAndConsole() {
        CallToolResult miss = call("execute_code", Map.of("code", TestTools.TWO));
        CallToolResult hit = call("execute_code", Map.of("code", TestTools.TWO));

        assertThat(miss.isError()).isFalse();
        assertThat(structured(miss).get("result").intValue()).isEqualTo(2);
        assertThat(structured(miss).get("hit").booleanValue()).isFalse();
        assertThat(structured(miss).get("cache").textValue()).isEqualTo("miss");
        assertThat(structured(miss).get("executionTimeMs").doubleValue()).isEqualTo(40.0);
        assertThat(structured(hit).get("hit").booleanValue()).isTrue();
        assertThat(structured(hit).get("cache").textValue()).isEqualTo("hit");
        assertThat(structured(hit).get("key").textValue()).isEqualTo(structured(miss).get("key").textValue());
        assertThat(structured(hit).get("savedMs").doubleValue()).isPositive().isLessThanOrEqualTo(40.0);
        assertThat(fixture.sandbox.executions()).isEqualTo(1);
    }

    @Test
    void theTextContentIsTheStructuredContentAsJson() throws Exception {
        CallToolResult result = call("execute_code", Map.of("code", "return context", "context", Map.of("a", 1)));

        assertThat(Json.MAPPER.readTree(text(result))).isEqualTo(structured(result));
        assertThat(structured(result).get("result")).isEqualTo(Json.MAPPER.readTree("{\"a\":1}"));
        assertThat(structured(result).get("console").textValue()).isEqualTo("echoed\n");
    }

    @Test
    void contextKeyOrderDoesNotMatter() {
        Map<String, Object> ab = new LinkedHashMap<>();
        ab.put("a", 1);
        ab.put("b", 2);
        Map<String, Object> ba = new LinkedHashMap<>();
        ba.put("b", 2);
        ba.put("a", 1);

        call("execute_code", Map.of("code", "return context", "context", ab));
        CallToolResult second = call("execute_code", Map.of("code", "return context", "context", ba));

        assertThat(structured(second).get("cache").textValue()).isEqualTo("hit");
    }

    @Test
    void aFailedRunIsAToolErrorWithTheTypedErrorAsTextAndIsNotCached() {
        CallToolResult first = call("execute_code", Map.of("code", TestTools.BOOM));
        CallToolResult second = call("execute_code", Map.of("code", TestTools.BOOM));

        assertThat(first.isError()).isTrue();
        JsonNode error = errorFacts(first).get("error");
        assertThat(error.get("type").textValue()).isEqualTo("RuntimeError");
        assertThat(error.get("message").textValue()).isEqualTo("boom");
        assertThat(error.get("stack").textValue()).contains("<code>:1:7");
        assertThat(error.get("line").intValue()).isEqualTo(1);
        assertThat(error.get("column").intValue()).isEqualTo(7);
        assertThat(errorFacts(first).get("console").textValue()).isEqualTo("about to fail\n");
        assertThat(errorFacts(first).has("result")).isFalse();
        assertThat(errorFacts(second).get("cache").textValue()).isEqualTo("miss");
        assertThat(fixture.sandbox.executions()).isEqualTo(2);
    }

    @Test
    void aContextThatIsNotAnObjectIsAToolErrorNamingTheArgument() {
        CallToolResult result = call("execute_code", Map.of("code", TestTools.TWO, "context", "{\"a\":1}"));

        assertThat(result.isError()).isTrue();
        assertThat(text(result)).isEqualTo("context: must be a JSON object, not a string");
        assertThat(fixture.sandbox.executions()).isZero();
    }

    @Test
    void missingCodeIsAToolError() {
        CallToolResult result = call("execute_code", Map.of("context", Map.of()));

        assertThat(result.isError()).isTrue();
        assertThat(text(result)).startsWith("code: ");
    }

    @Test
    void anUnknownToolIsAToolErrorThatSaysWhereVersionsComeFrom() {
        CallToolResult result = call("execute_code", Map.of("code", TestTools.TWO, "tools", List.of("github", "slack")));

        assertThat(result.isError()).isTrue();
        assertThat(text(result)).contains("unknown tool 'slack'").contains("github, jira").contains("tools: in");
        assertThat(fixture.sandbox.executions()).isZero();
    }

    @Test
    void theDeclaredToolsAreTheOnesTheKeyDependsOn() {
        call("execute_code", Map.of("code", TestTools.TWO, "tools", List.of("github")));
        fixture.versions.set("jira", "j2");
        CallToolResult afterJiraChanged = call("execute_code", Map.of("code", TestTools.TWO, "tools", List.of("github")));
        fixture.versions.set("github", "v2");
        CallToolResult afterGithubChanged = call("execute_code", Map.of("code", TestTools.TWO, "tools", List.of("github")));

        assertThat(structured(afterJiraChanged).get("cache").textValue()).isEqualTo("hit");
        assertThat(structured(afterGithubChanged).get("cache").textValue()).isEqualTo("miss");
    }

    @Test
    void aTimeoutWithinTheServersLimitIsTheRunsLimit() {
        call("execute_code", Map.of("code", TestTools.TWO, "timeout", 2.5));

        assertThat(fixture.requests.get(0).limits().timeout()).isEqualTo(Duration.ofMillis(2500));
    }

    @Test
    void withoutATimeoutTheServersLimitApplies() {
        call("execute_code", Map.of("code", TestTools.TWO));

        assertThat(fixture.requests.get(0).limits().timeout()).isEqualTo(Duration.ofSeconds(10));
    }

    @Test
    void aTimeoutAboveTheServersLimitIsRefused() {
        CallToolResult result = call("execute_code", Map.of("code", TestTools.TWO, "timeout", 11));

        assertThat(result.isError()).isTrue();
        assertThat(text(result)).isEqualTo("timeout: at most 10 seconds (the server's --timeout), not 11");
        assertThat(fixture.sandbox.executions()).isZero();
    }

    @Test
    void statsCountWhatHappened() {
        call("execute_code", Map.of("code", TestTools.TWO));
        call("execute_code", Map.of("code", TestTools.TWO));
        call("execute_code", Map.of("code", TestTools.TWO));

        JsonNode stats = structured(call("cache_stats", Map.of()));

        assertThat(stats.get("store").textValue()).isEqualTo("memory");
        assertThat(stats.get("hits").longValue()).isEqualTo(2);
        assertThat(stats.get("misses").longValue()).isEqualTo(1);
        assertThat(stats.get("entries").longValue()).isEqualTo(1);
        assertThat(stats.get("hitRate").doubleValue()).isCloseTo(2 / 3.0, org.assertj.core.data.Offset.offset(1e-9));
    }

    @Test
    void invalidateToolRemovesTheEntriesThatDependedOnIt() {
        call("execute_code", Map.of("code", TestTools.TWO, "tools", List.of("github")));
        call("execute_code", Map.of("code", "return context", "tools", List.of("jira")));

        CallToolResult result = call("invalidate_tool", Map.of("tool", "github"));

        assertThat(structured(result).get("removed").intValue()).isEqualTo(1);
        assertThat(structured(call("execute_code", Map.of("code", "return context", "tools", List.of("jira"))))
                .get("cache").textValue()).isEqualTo("hit");
    }

    @Test
    void clearCacheRemovesEverythingOrWhatMatches() {
        call("execute_code", Map.of("code", TestTools.TWO));
        String key = structured(call("execute_code", Map.of("code", "return context"))).get("key").textValue();

        CallToolResult one = call("clear_cache", Map.of("pattern", key));
        CallToolResult rest = call("clear_cache", Map.of());

        assertThat(structured(one).get("removed").intValue()).isEqualTo(1);
        assertThat(structured(rest).get("removed").intValue()).isEqualTo(1);
        assertThat(structured(rest).get("pattern").textValue()).isEqualTo("*");
    }

    @Test
    void annotationsTellTheTruth() {
        Tool stats = tools.get("cache_stats").tool();
        Tool execute = tools.get("execute_code").tool();
        Tool invalidate = tools.get("invalidate_tool").tool();
        Tool clear = tools.get("clear_cache").tool();

        // a hint left out says MCP's default: not read-only, destructive, not idempotent, open world
        assertThat(stats.annotations().readOnlyHint()).isTrue();
        assertThat(execute.annotations().readOnlyHint()).as("not read-only: MCP's default").isNull();
        assertThat(execute.annotations().destructiveHint()).isFalse();
        assertThat(execute.annotations().idempotentHint()).isTrue();
        assertThat(execute.annotations().openWorldHint()).isFalse();
        assertThat(invalidate.annotations().readOnlyHint()).isNull();
        assertThat(invalidate.annotations().destructiveHint()).as("destructive: MCP's default").isNull();
        assertThat(invalidate.annotations().idempotentHint()).isTrue();
        assertThat(clear.annotations().readOnlyHint()).isNull();
        assertThat(clear.annotations().destructiveHint()).isNull();
        assertThat(clear.annotations().openWorldHint()).isFalse();
        // MCP gives a read-only tool's destructive and idempotent hints no meaning
        assertThat(stats.annotations().destructiveHint()).isNull();
        assertThat(stats.annotations().idempotentHint()).isNull();
        assertThat(stats.annotations().openWorldHint()).isFalse();
    }

    @Test
    void everyArgumentIsDescribedAndNoOtherIsAccepted() {
        for (OfferedTool spec : tools.values()) {
            Map<String, Object> schema = spec.tool().inputSchema();
            // the list leaves additionalProperties: false out; the call says what is not an argument
            assertThat(schema).containsEntry("type", "object").doesNotContainKey("additionalProperties");
            assertThat(text(call(spec.tool().name(), Map.of("verbose", true))))
                    .as(spec.tool().name()).contains("verbose: not an argument of " + spec.tool().name());
            @SuppressWarnings("unchecked")
            Map<String, Map<String, Object>> properties = (Map<String, Map<String, Object>>) schema.get("properties");
            properties.forEach((name, property) -> assertThat(property)
                    .as(spec.tool().name() + "." + name).containsKey("description"));
            assertThat(spec.tool().description()).isNotBlank();
            // the answer's schema is part of the full contract describe_tools gives, not of tools/list
            assertThat(spec.tool().outputSchema()).isNull();
        }
    }

    @Test
    void theTimeoutsSchemaStatesTheServersLimit() {
        @SuppressWarnings("unchecked")
        Map<String, Object> timeout = (Map<String, Object>) ((Map<String, Object>) tools.get("execute_code").tool()
                .inputSchema().get("properties")).get("timeout");

        assertThat(timeout).containsEntry("maximum", 10);
    }
}
