package dev.execache.gateway;

import dev.execache.gateway.Json;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** A tool call's arguments and _meta made plain by hand, as the SDK's mapper would convert them; ids written by hand. */
class JsonTest {
    private static final McpJsonMapper SDK = new JacksonMcpJsonMapper(new ObjectMapper());
    private static final Function<JsonNode, Object> FALLBACK = node -> SDK.convertValue(node, Object.class);

    @ParameterizedTest
    @ValueSource(strings = {
        "{}",
        "{\"code\":\"return 1 + 1\",\"context\":{},\"tools\":[]}",
        "{\"s\":\"é \\u2028 \\ud83d\\ude00 \\\"q\\\"\",\"t\":true,\"f\":false,\"n\":null}",
        "{\"i\":0,\"neg\":-7,\"max\":2147483647,\"over\":2147483648,\"long\":-9223372036854775808,"
                + "\"big\":123456789012345678901234567890}",
        "{\"d\":1.5,\"e\":1e300,\"small\":-2.5E-7,\"z\":0.0,\"precise\":0.1000000000000000055511151231257827}",
        "{\"nested\":{\"a\":[1,[2,{\"b\":[]}],{\"c\":{\"d\":null}}],\"e\":{}},\"empty\":[],\"mixed\":[1,\"x\",true,null,2.5]}",
        "{\"progressToken\":42,\"io.modelcontextprotocol/clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}",
    })
    void aParsedObjectIsMadeTheSamePlainValuesAsTheSdkMapperMakesIt(String json) throws Exception {
        ObjectNode node = (ObjectNode) Json.MAPPER.readTree(json);

        Map<String, Object> plain = Json.plain(node, FALLBACK);

        Map<String, Object> converted = SDK.convertValue(node, new TypeRef<Map<String, Object>>() {
        });
        assertThat(plain).isEqualTo(converted);
        assertSameTypes(plain, converted);
    }

    @ParameterizedTest
    @ValueSource(strings = {"1.25", "3"})
    void aNodeOfAnotherKindGoesThroughTheFallback(String number) {
        ObjectNode node = Json.MAPPER.createObjectNode();
        node.set("decimal", Json.MAPPER.getNodeFactory().numberNode(new BigDecimal(number)));
        node.set("float", Json.MAPPER.getNodeFactory().numberNode(Float.parseFloat(number)));
        node.set("short", Json.MAPPER.getNodeFactory().numberNode((short) 3));

        Map<String, Object> plain = Json.plain(node, FALLBACK);

        Map<String, Object> converted = SDK.convertValue(node, new TypeRef<Map<String, Object>>() {
        });
        assertThat(plain).isEqualTo(converted);
        assertSameTypes(plain, converted);
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "7", "-12", "2147483648", "-9223372036854775808", "123456789012345678901234567890"})
    void anIntegerIdAsTextIsWhatTheMapperWritesForIt(String id) throws Exception {
        JsonNode node = Json.MAPPER.readTree(id);

        assertThat(node.isIntegralNumber()).isTrue();
        assertThat(node.asText()).isEqualTo(Json.write(node));
    }

    /** Equal maps may still differ in kind (a Long where an Integer was, a TreeMap for a LinkedHashMap). */
    private static void assertSameTypes(Object actual, Object expected) {
        if (expected == null) {
            assertThat(actual).isNull();
            return;
        }
        assertThat(actual).hasSameClassAs(expected);
        if (expected instanceof Map<?, ?> map) {
            assertThat(List.copyOf(((Map<?, ?>) actual).keySet())).isEqualTo(List.copyOf(map.keySet()));
            map.forEach((key, value) -> assertSameTypes(((Map<?, ?>) actual).get(key), value));
        } else if (expected instanceof List<?> list) {
            for (int i = 0; i < list.size(); i++) {
                assertSameTypes(((List<?>) actual).get(i), list.get(i));
            }
        }
    }
}
