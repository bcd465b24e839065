package dev.execache.tools.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class McpHeadersTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static JsonNode json(String text) throws Exception {
        return JSON.readTree(text.replace('\'', '"'));
    }

    @Test
    void standardHeadersMirrorTheMethodAndTheNameOrUri() throws Exception {
        assertThat(McpHeaders.standard(json("{'method':'tools/call','params':{'name':'get_weather'}}")))
                .containsExactly(Map.entry("Mcp-Method", "tools/call"), Map.entry("Mcp-Name", "get_weather"));
        assertThat(McpHeaders.standard(json("{'method':'resources/read','params':{'uri':'file:///a%20b.txt'}}")))
                .containsEntry("Mcp-Name", "file:///a%20b.txt");
        assertThat(McpHeaders.standard(json("{'method':'prompts/get','params':{'name':'größe'}}")))
                .containsEntry("Mcp-Name", "=?base64?Z3LDtsOfZQ==?=");
        assertThat(McpHeaders.standard(json("{'method':'tools/list','params':{}}")))
                .containsExactly(Map.entry("Mcp-Method", "tools/list"));
        assertThat(McpHeaders.standard(json("{'id':1,'result':{}}"))).isEmpty();
    }

    @Test
    void valuesThatAreNotPlainVisibleAsciiAreSentInBase64AsTheSpecsExamplesShow() {
        assertThat(McpHeaders.encode("us-west1")).isEqualTo("us-west1");
        assertThat(McpHeaders.encode("us west 1")).isEqualTo("us west 1");
        assertThat(McpHeaders.encode("Hello, 世界")).isEqualTo("=?base64?SGVsbG8sIOS4lueVjA==?=");
        assertThat(McpHeaders.encode(" padded ")).isEqualTo("=?base64?IHBhZGRlZCA=?=");
        assertThat(McpHeaders.encode("line1\nline2")).isEqualTo("=?base64?bGluZTEKbGluZTI=?=");
        assertThat(McpHeaders.encode("\tindented")).startsWith("=?base64?");
        assertThat(McpHeaders.encode("=?base64?literal?=")).isEqualTo("=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=");
        assertThat(McpHeaders.encode("")).isEmpty();
    }

    @Test
    void declaredParametersBecomeHeadersAndAbsentOrNullOnesDoNot() throws Exception {
        McpHeaders.Declarations declared = McpHeaders.declarations(json("""
                {'type':'object','properties':{
                  'region':{'type':'string','x-mcp-header':'Region'},
                  'priority':{'type':'integer','x-mcp-header':'Priority'},
                  'verbose':{'type':['boolean','null'],'x-mcp-header':'Verbose'},
                  'target':{'type':'object','properties':{'zone':{'type':'string','x-mcp-header':'Zone'}}},
                  'query':{'type':'string'}}}"""));

        assertThat(declared.headers()).containsOnlyKeys(List.of("region"), List.of("priority"), List.of("verbose"),
                List.of("target", "zone"));
        assertThat(declared.of(json("{'region':'Hello, 世界','priority':42,'verbose':false,"
                + "'target':{'zone':'b'},'query':'SELECT 1'}"))).containsExactlyInAnyOrderEntriesOf(Map.of(
                "Mcp-Param-Region", "=?base64?SGVsbG8sIOS4lueVjA==?=", "Mcp-Param-Priority", "42",
                "Mcp-Param-Verbose", "false", "Mcp-Param-Zone", "b"));
        assertThat(declared.of(json("{'region':'us','verbose':null}"))).containsExactly(Map.entry("Mcp-Param-Region", "us"));
        assertThat(McpHeaders.declarations(json("{'type':'object','properties':{'a':{'type':'string'}}}")).headers())
                .isEmpty();
    }

    @Test
    void everyDeclarationTheSpecForbidsMakesTheToolInvalid() {
        for (String property : List.of(
                "{'type':'string','x-mcp-header':''}",
                "{'type':'object','x-mcp-header':'Data'}",
                "{'type':'array','items':{'type':'string'},'x-mcp-header':'Items'}",
                "{'type':'null','x-mcp-header':'Nil'}",
                "{'type':'number','x-mcp-header':'Score'}",
                "{'x-mcp-header':'Untyped'}",
                "{'type':'string','x-mcp-header':'My Region'}",
                "{'type':'string','x-mcp-header':'Region:Primary'}",
                "{'type':'string','x-mcp-header':'Région'}",
                "{'type':'string','x-mcp-header':'Region\\t1'}",
                "{'type':'string','x-mcp-header':7}",
                "{'type':'array','items':{'type':'string','x-mcp-header':'Inner'}}",
                "{'anyOf':[{'type':'string','x-mcp-header':'Either'}]}")) {
            assertThatThrownBy(() -> McpHeaders.declarations(json("{'type':'object','properties':{'p':" + property + "}}")))
                    .as(property).isInstanceOf(McpHeaders.InvalidDeclarationException.class);
        }
        assertThatThrownBy(() -> McpHeaders.declarations(json("""
                {'type':'object','properties':{'a':{'type':'string','x-mcp-header':'MyField'},
                  'b':{'type':'string','x-mcp-header':'myfield'}}}""")))
                .isInstanceOf(McpHeaders.InvalidDeclarationException.class)
                .hasMessageContaining("declared twice");
        assertThatThrownBy(() -> McpHeaders.declarations(json("""
                {'type':'object','$defs':{'r':{'type':'string','x-mcp-header':'Region'}},
                  'properties':{'r':{'$ref':'#/$defs/r'}}}""")))
                .isInstanceOf(McpHeaders.InvalidDeclarationException.class)
                .hasMessageContaining("not a property reached through properties alone");
    }
}
