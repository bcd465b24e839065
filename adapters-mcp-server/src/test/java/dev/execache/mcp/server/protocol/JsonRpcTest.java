package dev.execache.mcp.server.protocol;

import dev.execache.mcp.server.protocol.JsonRpc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class JsonRpcTest {
    private static final String ENVELOPE = "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
            + "\"io.modelcontextprotocol/clientCapabilities\":{}}";

    @Test
    void aWholeRequestOfEachEraIsTypedWithItsEra() {
        JsonRpc.Request legacy = (JsonRpc.Request) JsonRpc.parse(
                "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"t\"}}", "line");
        JsonRpc.Request modern = (JsonRpc.Request) JsonRpc.parse(
                "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"tools/list\",\"params\":{" + ENVELOPE + "}}", "body");
        JsonRpc.Request discover = (JsonRpc.Request) JsonRpc.parse(
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\"}", "body");

        assertThat(legacy.modern()).isFalse();
        assertThat(legacy.idValue()).isEqualTo(7);
        assertThat(legacy.params().get("name").textValue()).isEqualTo("t");
        assertThat(modern.modern()).isTrue();
        assertThat(modern.idValue()).isEqualTo("a");
        assertThat(discover.modern()).isTrue();
        assertThat(discover.params().isEmpty()).isTrue();
    }

    @Test
    void notificationsResponsesAndBatchesAreToldApart() {
        assertThat(JsonRpc.parse("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":3}}",
                "line")).isInstanceOf(JsonRpc.Notification.class);
        assertThat(JsonRpc.parse("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}", "line")).isInstanceOf(JsonRpc.Response.class);
        assertThat(JsonRpc.parse("[{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}]", "line"))
                .isInstanceOf(JsonRpc.Batch.class);
    }

    @Test
    void aMessageThatIsNotJsonRpcIsAnErrorOfTheMessage() {
        JsonRpc.Invalid notJson = (JsonRpc.Invalid) JsonRpc.parse("{nope", "line");
        JsonRpc.Invalid wrongVersion = (JsonRpc.Invalid) JsonRpc.parse("{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", "body");
        JsonRpc.Invalid badId = (JsonRpc.Invalid) JsonRpc.parse("{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", "body");
        JsonRpc.Invalid neither = (JsonRpc.Invalid) JsonRpc.parse("{\"jsonrpc\":\"2.0\",\"id\":1}", "body");

        assertThat(notJson.code()).isEqualTo(-32700);
        assertThat(notJson.message()).isEqualTo("Parse error: the line is not JSON");
        assertThat(wrongVersion.code()).isEqualTo(-32600);
        assertThat(wrongVersion.id().intValue()).isEqualTo(1);
        assertThat(badId.message()).contains("id must be a string or an integer");
        assertThat(neither.message()).contains("not a JSON-RPC 2.0 request");
        assertThat(java.util.List.of(notJson, wrongVersion, badId, neither))
                .allMatch(each -> each.fault() == JsonRpc.Fault.MESSAGE);
    }

    @Test
    void aMethodOutsideItsEraIsNotFound() {
        JsonRpc.Invalid initializeModern = (JsonRpc.Invalid) JsonRpc.parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
                + "\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\"," + ENVELOPE + "}}", "body");
        JsonRpc.Invalid discoverLegacyName = (JsonRpc.Invalid) JsonRpc.parse(
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/frobnicate\"}", "body");

        assertThat(initializeModern.code()).isEqualTo(-32601);
        assertThat(initializeModern.fault()).isEqualTo(JsonRpc.Fault.METHOD);
        assertThat(initializeModern.modern()).isTrue();
        assertThat(initializeModern.message()).contains("not a method of protocol version 2026-07-28");
        assertThat(discoverLegacyName.modern()).isFalse();
        assertThat(discoverLegacyName.message()).isEqualTo("Method not found: tools/frobnicate");
    }

    @Test
    void eachEraHasItsOwnTasksMethods() {
        for (String both : List.of("tasks/get", "tasks/cancel")) {
            assertThat(JsonRpc.isMethodOf(both, false)).as(both).isTrue();
            assertThat(JsonRpc.isMethodOf(both, true)).as(both).isTrue();
        }
        // the extension removed tasks/result and tasks/list, and added tasks/update (SEP-2663)
        for (String legacy : List.of("tasks/result", "tasks/list")) {
            assertThat(JsonRpc.isMethodOf(legacy, false)).as(legacy).isTrue();
            assertThat(JsonRpc.isMethodOf(legacy, true)).as(legacy).isFalse();
        }
        assertThat(JsonRpc.isMethodOf("tasks/update", true)).isTrue();
        assertThat(JsonRpc.isMethodOf("tasks/update", false)).isFalse();
        assertThat(problem("tasks/get", "{}")).contains("params.taskId");
        assertThat(problem("tasks/cancel", "{\"taskId\":1}")).contains("params.taskId");
        assertThat(JsonRpc.parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tasks/result\",\"params\":{\"taskId\":\"a\"}}",
                "line")).isInstanceOf(JsonRpc.Request.class);
    }

    @Test
    void eachMethodsParamsAreCheckedNamingTheField() {
        assertThat(problem("tools/call", "{\"arguments\":{}}")).contains("params.name");
        assertThat(problem("tools/call", "{\"name\":\"t\",\"arguments\":[]}")).contains("params.arguments");
        assertThat(problem("tools/call", "{\"name\":\"t\",\"_meta\":{\"progressToken\":1.5}}"))
                .contains("params._meta.progressToken");
        assertThat(problem("tools/call", "{\"name\":\"t\",\"_meta\":3}")).contains("params._meta must be an object");
        assertThat(problem("tools/list", "{\"cursor\":3}")).contains("params.cursor");
        assertThat(problem("logging/setLevel", "{\"level\":\"INFO\"}")).contains("params.level must be one of debug");
        assertThat(problem("initialize", "{}")).contains("params.protocolVersion");
        assertThat(problem("initialize", "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":1}"))
                .contains("params.capabilities");
        assertThat(problem("ping", "[]")).isEqualTo("Invalid params: params must be an object");
    }

    @Test
    void aBrokenEnvelopeOrAnUnknownVersionIsAnErrorOfTheEnvelope() {
        JsonRpc.Invalid noCapabilities = (JsonRpc.Invalid) JsonRpc.parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
                + "\"tools/list\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}", "body");
        JsonRpc.Invalid future = (JsonRpc.Invalid) JsonRpc.parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\","
                + "\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2099-01-01\","
                + "\"io.modelcontextprotocol/clientCapabilities\":{}}}}", "body");

        assertThat(noCapabilities.fault()).isEqualTo(JsonRpc.Fault.ENVELOPE);
        assertThat(noCapabilities.message()).contains("clientCapabilities is missing");
        assertThat(future.code()).isEqualTo(-32022);
        assertThat(future.data().get("requested").textValue()).isEqualTo("2099-01-01");
        assertThat(future.source().get("method").textValue()).isEqualTo("tools/list");
    }

    private static String problem(String method, String params) {
        JsonRpc.Message message = JsonRpc.parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"" + method
                + "\",\"params\":" + params + "}", "line");
        assertThat(message).isInstanceOf(JsonRpc.Invalid.class);
        JsonRpc.Invalid invalid = (JsonRpc.Invalid) message;
        assertThat(invalid.code()).isEqualTo(-32602);
        return invalid.message();
    }

    @Test
    void theServersFeaturesParamsAreCheckedNamingTheField() {
        String request = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\",\"params\":%s}";

        assertThat(((JsonRpc.Invalid) JsonRpc.parse(request.formatted("resources/read", "{}"), "line")).message())
                .isEqualTo("Invalid params: params.uri must be the resource's URI as a string");
        assertThat(((JsonRpc.Invalid) JsonRpc.parse(request.formatted("prompts/get",
                "{\"name\":\"p\",\"arguments\":{\"n\":1}}"), "line")).message())
                .isEqualTo("Invalid params: params.arguments' values must be strings");
        assertThat(((JsonRpc.Invalid) JsonRpc.parse(request.formatted("completion/complete",
                "{\"ref\":{\"type\":\"ref/tool\"},\"argument\":{\"name\":\"a\",\"value\":\"\"}}"), "line")).message())
                .isEqualTo("Invalid params: params.ref.type must be ref/prompt or ref/resource");
        assertThat(((JsonRpc.Invalid) JsonRpc.parse(request.formatted("completion/complete",
                "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"p\"}}"), "line")).message())
                .isEqualTo("Invalid params: params.argument must have a name and a value, both strings");
        assertThat(JsonRpc.parse(request.formatted("completion/complete", "{\"ref\":{\"type\":\"ref/resource\","
                + "\"uri\":\"a://{x}\"},\"argument\":{\"name\":\"x\",\"value\":\"\"}," + ENVELOPE + "}"), "body"))
                .isInstanceOf(JsonRpc.Request.class);
        assertThat(JsonRpc.parse(request.formatted("resources/list", "{\"cursor\":3}"), "line"))
                .isInstanceOf(JsonRpc.Invalid.class);
    }
}
