package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A server's resources (text, binary, a template), its prompt with arguments and its completions reach the agent
 * through {@code execache serve} as the server answers them directly, but for the prompt's name: the official
 * TypeScript client (features-client.mjs) asks the lab server (LAB_FEATURES=1) directly, then execache in each era
 * over HTTP (one serve, with a second lab that lists the same URIs) and on stdio (the lab with {@code prefix: false}).
 */
class ServerFeaturesIT {
    private static final Map<String, String> NO_POOL = Map.of("EXECACHE_WARM_POOL", "0");

    @TempDir
    static Path dir;

    private static HttpServeProcess http;
    private static JsonNode direct;

    @BeforeAll
    static void start() throws Exception {
        String lab = Downstream.nodeModules().resolveSibling("lab-server.mjs").toString();
        Path twins = Files.writeString(dir.resolve("twins.yaml"), """
                servers:
                  lab:
                    command: node
                    args: ["%1$s"]
                    env: {LAB_FEATURES: "1"}
                  twin:
                    command: node
                    args: ["%1$s"]
                    env: {LAB_FEATURES: "1"}
                """.formatted(lab));
        Files.writeString(dir.resolve("unprefixed.yaml"), """
                servers:
                  lab:
                    command: node
                    args: ["%s"]
                    env: {LAB_FEATURES: "1"}
                    prefix: false
                """.formatted(lab));
        http = HttpServeProcess.start(NO_POOL, "--store", "memory", "--config", twins.toString(), "--http", "0");
        direct = client(List.of("legacy", "greet", "stdio", "node", lab), Map.of("LAB_FEATURES", "1"));
        assertThat(direct.has("thrown")).as(direct.path("thrown").asText()).isFalse();
    }

    @AfterAll
    static void stop() throws InterruptedException {
        if (http != null) {
            http.close();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"legacy", "pinned"})
    void overHttpEveryAnswerIsTheServersOwnButThePromptsPrefix(String mode) throws Exception {
        JsonNode out = client(List.of(mode, "lab__greet", "http", http.url()), Map.of());

        assertSameAsDirect(out, mode, "lab__greet");
        // the twin lists the same URIs and template: they are the first server's, the twin's are left out, said once
        assertThat(http.stderr()).anyMatch(line -> line.contains("server twin: its resource lab://notes/readme is not"
                + " offered: server lab offers the same URI"));
        assertThat(promptNames(out)).containsExactly("lab__greet", "twin__greet");
    }

    @ParameterizedTest
    @ValueSource(strings = {"legacy", "pinned"})
    void onStdioEveryAnswerIsTheServersOwnAndAnUnprefixedServersPromptKeepsItsName(String mode) throws Exception {
        List<String> arguments = new ArrayList<>(List.of(mode, "greet", "stdio", ServeProcess.java()));
        arguments.addAll(ServeProcess.command("features-" + mode, List.of("--store", "memory", "--config",
                dir.resolve("unprefixed.yaml").toString())));

        JsonNode out = client(arguments, NO_POOL);

        assertSameAsDirect(out, mode, "greet");
        assertThat(promptNames(out)).containsExactly("greet");
    }

    @Test
    void aUriNoServerListsOrMatchesIsResourceNotFound() throws Exception {
        JsonNode out = client(List.of("legacy", "lab__greet", "http", http.url()), Map.of());

        assertThat(out.at("/missing/code").intValue()).isEqualTo(-32002);
        assertThat(out.at("/missing/message").textValue()).contains("Resource not found: lab://nowhere");
    }

    private static void assertSameAsDirect(JsonNode out, String mode, String prompt) {
        assertThat(out.has("thrown")).as(out.path("thrown").asText()).isFalse();
        assertThat(out.get("era").textValue()).isEqualTo(mode.equals("legacy") ? "legacy" : "modern");
        assertThat(out.get("capabilities")).isEqualTo(direct.get("capabilities"));
        for (String answer : List.of("text", "blob", "room", "prompt")) {
            // a read through execache says it was passed on, not cached; the server says nothing of it
            assertThat(out.at("/cache/" + answer).textValue()).as(answer).isEqualTo("bypass");
            assertThat(direct.at("/cache/" + answer).isNull()).as(answer).isTrue();
        }
        for (String answer : List.of("resources", "templates", "text", "blob", "room", "prompt", "rooms", "styles")) {
            assertThat(out.get(answer)).as(answer).isEqualTo(direct.get(answer));
        }
        // the bytes of the binary resource, not UTF-8, come back as they were
        assertThat(out.at("/blob/contents/0/blob").textValue()).isEqualTo("iVBORw0KGgoA//6A");
        assertThat(out.at("/prompt/messages/0/content/text").textValue()).isEqualTo("Greet Ada in a formal way.");
        ObjectNode offered = (ObjectNode) out.at("/prompts/prompts/0").deepCopy();
        assertThat(offered.get("name").textValue()).isEqualTo(prompt);
        offered.put("name", "greet");
        assertThat(offered).isEqualTo(direct.at("/prompts/prompts/0"));
        assertThat((ArrayNode) direct.at("/prompts/prompts")).hasSize(1);
    }

    private static List<String> promptNames(JsonNode out) {
        List<String> names = new ArrayList<>();
        out.at("/prompts/prompts").forEach(prompt -> names.add(prompt.get("name").textValue()));
        return names;
    }

    private static JsonNode client(List<String> arguments, Map<String, String> env) throws Exception {
        return TypeScriptClient.runScript("features-client.mjs", arguments, env);
    }
}
