package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.gateway.Downstream;
import dev.execache.tools.mcp.HttpLab;
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
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A server's resources (text, binary, a template), its prompt with arguments and its completions reach the agent
 * through {@code execache serve} as the server answers them directly, but for the prompt's name, whether the server is
 * a command server or a url server: the official TypeScript client (features-client.mjs) asks the lab server
 * (LAB_FEATURES=1) directly, then execache in each era over HTTP (one serve of command servers and one of url servers,
 * each with a second lab that lists the same URIs) and on stdio (the lab with {@code prefix: false}). Its log messages
 * come back tagged with its name (2025-11-25: at the session's level, over HTTP on the session's stream; 2026-07-28: at
 * the level the call asked for, on the call's stream), as does its progress on stdio; what it sends outside any answer
 * (a tool list changed, a subscribed resource updated, the resources' and prompts' lists changed) reaches the agent on
 * stdio (2026-07-28: a subscriptions/listen stream, which the client's cancel ends) and over HTTP (2025-11-25: the
 * session's GET stream; 2026-07-28: a subscriptions/listen stream). The url lab
 * (http-lab-server.mjs --features) answers as the command lab does.
 */
class ServerFeaturesIT {
    private static final Map<String, String> NO_POOL = Map.of("EXECACHE_WARM_POOL", "0");

    @TempDir
    static Path dir;

    private static HttpLab urlLab;
    private static HttpServeProcess http;
    private static HttpServeProcess httpOfUrls;
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
        urlLab = HttpLab.start("--features");
        Path urlTwins = Files.writeString(dir.resolve("url-twins.yaml"), """
                servers:
                  lab:
                    url: %1$s
                  twin:
                    url: %1$s
                """.formatted(urlLab.url()));
        Files.writeString(dir.resolve("unprefixed-url.yaml"), """
                servers:
                  lab:
                    url: %s
                    prefix: false
                """.formatted(urlLab.url()));
        http = HttpServeProcess.start(NO_POOL, "--store", "memory", "--config", twins.toString(), "--http", "0");
        httpOfUrls = HttpServeProcess.start(NO_POOL, "--store", "memory", "--config", urlTwins.toString(), "--http", "0");
        direct = client(List.of("legacy", "greet", "stdio", "node", lab), Map.of("LAB_FEATURES", "1"));
        assertThat(direct.has("thrown")).as(direct.path("thrown").asText()).isFalse();
        assertAllProgressBeforeTheAnswer(direct);
    }

    @AfterAll
    static void stop() throws InterruptedException {
        if (http != null) {
            http.close();
        }
        if (httpOfUrls != null) {
            httpOfUrls.close();
        }
        if (urlLab != null) {
            urlLab.close();
        }
    }

    @ParameterizedTest(name = "{0} era, {1} servers")
    @CsvSource({"legacy, command", "pinned, command", "legacy, url", "pinned, url"})
    void overHttpEveryAnswerIsTheServersOwnButThePromptsPrefix(String mode, String servers) throws Exception {
        HttpServeProcess serve = servers.equals("url") ? httpOfUrls : http;
        JsonNode out = client(List.of(mode, "lab__greet", "http", serve.url()), Map.of());

        assertSameAsDirect(out, mode, "lab__greet");
        assertResourceNotFound(out, mode);
        assertLogsPassedOn(out);
        assertNotificationsPassedOn(out, mode);
        if (mode.equals("legacy")) {
            // the call's progress on its event stream, before its answer
            assertAllProgressBeforeTheAnswer(out);
        }
        // the twin lists the same URIs and template: they are the first server's, the twin's are left out, said once
        assertThat(serve.stderr()).anyMatch(line -> line.contains("server twin: its resource lab://notes/readme is not"
                + " offered: server lab offers the same URI"));
        assertThat(promptNames(out)).containsExactly("lab__greet", "twin__greet");
    }

    @ParameterizedTest(name = "{0} era, a {1} server")
    @CsvSource({"legacy, command", "pinned, command", "legacy, url", "pinned, url"})
    void onStdioEveryAnswerIsTheServersOwnAndAnUnprefixedServersPromptKeepsItsName(String mode, String server)
            throws Exception {
        List<String> arguments = new ArrayList<>(List.of(mode, "greet", "stdio", ServeProcess.java()));
        arguments.addAll(ServeProcess.command("features-" + mode + "-" + server, List.of("--store", "memory", "--config",
                dir.resolve(server.equals("url") ? "unprefixed-url.yaml" : "unprefixed.yaml").toString())));

        JsonNode out = client(arguments, NO_POOL);

        assertSameAsDirect(out, mode, "greet");
        assertResourceNotFound(out, mode);
        assertThat(promptNames(out)).containsExactly("greet");
        assertLogsPassedOn(out);
        assertNotificationsPassedOn(out, mode);
        if (mode.equals("legacy")) {
            assertAllProgressBeforeTheAnswer(out);
        } else {
            // the client's listen() ended by its close(): the lab was told, and sends no update any more
            assertThat(out.at("/notified/closed").textValue()).isEqualTo("local");
            assertThat(out.at("/notified/sentAfterUnsubscribe").booleanValue()).isFalse();
        }
    }

    /**
     * A URI no server lists or matches: the initialize era's -32002, the 2026-07-28 era's -32602 with the URI in
     * data (that revision has no -32002).
     */
    private static void assertResourceNotFound(JsonNode out, String mode) {
        assertThat(out.at("/missing/code").intValue()).isEqualTo(mode.equals("legacy") ? -32002 : -32602);
        assertThat(out.at("/missing/message").textValue()).contains("Resource not found: lab://nowhere");
        if (!mode.equals("legacy")) {
            assertThat(out.at("/missing/data/uri").textValue()).isEqualTo("lab://nowhere");
        }
    }

    private static void assertSameAsDirect(JsonNode out, String mode, String prompt) {
        assertThat(out.has("thrown")).as(out.path("thrown").asText()).isFalse();
        assertThat(out.get("era").textValue()).isEqualTo(mode.equals("legacy") ? "legacy" : "modern");
        assertThat(out.get("capabilities")).isEqualTo(direct.get("capabilities"));
        for (String answer : List.of("text", "blob", "room", "prompt")) {
            // a read through execache says how the cache answered it (the lab is a local server: its reads are asked
            // every time, unless a config caches them); the server says nothing
            assertThat(out.at("/cache/" + answer).textValue()).as(answer).isIn("miss", "bypass", "hit");
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

    /**
     * The agent's level reached the server (2025: logging/setLevel; 2026-07-28: the call's _meta), whose message comes
     * back tagged with its name; the one below the 2026 call's level does not.
     */
    private static void assertLogsPassedOn(JsonNode out) {
        assertThat(direct.get("logs")).hasSize(1);
        // execache's own may come too (on stdio): the tool log may write, and removes a read of the lab's that was
        // slow enough to be kept
        List<JsonNode> labLogs = new ArrayList<>();
        out.get("logs").forEach(log -> {
            if (!log.path("logger").asText().equals("execache")) {
                labLogs.add(log);
            }
        });
        assertThat(labLogs).hasSize(1);
        assertThat(labLogs.get(0).get("logger").textValue()).isEqualTo("lab/db");
        assertThat(labLogs.get(0).get("level")).isEqualTo(direct.at("/logs/0/level"));
        assertThat(labLogs.get(0).get("data")).isEqualTo(direct.at("/logs/0/data"));
        assertThat(labLogs.get(0).get("data").toString()).isEqualTo("{\"rows\":3,\"table\":\"t\"}");
    }

    /** What the lab sent outside any answer reached the agent as it reaches a client of the lab directly. */
    private static void assertNotificationsPassedOn(JsonNode out, String mode) {
        JsonNode heard = out.get("notified");
        JsonNode directly = direct.get("notified");
        for (String list : List.of("tools", "resources", "prompts")) {
            assertThat(directly.get(list).booleanValue()).as(list).isTrue();
            assertThat(heard.get(list).booleanValue()).as(list).isTrue();
        }
        // the subscription reached the lab, which sent the update only then; the agent got it unchanged
        assertThat(heard.get("sent")).isEqualTo(directly.get("sent"));
        assertThat(directly.at("/updated/0/uri").textValue()).isEqualTo("lab://notes/readme");
        assertThat(heard.at("/updated/0")).isEqualTo(directly.at("/updated/0"));
        if (mode.equals("legacy")) {
            // and the unsubscription too: the lab sends no update any more
            assertThat(directly.get("sentAfterUnsubscribe").booleanValue()).isFalse();
            assertThat(heard.get("sentAfterUnsubscribe").booleanValue()).isFalse();
        } else {
            assertThat(heard.at("/acknowledged/toolsListChanged").booleanValue()).isTrue();
            assertThat(heard.at("/acknowledged/resourceSubscriptions/0").textValue()).isEqualTo("lab://notes/readme");
        }
    }

    /**
     * The server reports progress 1, 2, 3 of 3 under execache's token; the agent gets every step under its own, each
     * before the call's answer. The SDK hands on the steps it reads before the answer, in order: one that arrives in
     * the same read as the answer it drops (typescript-sdk #2580), however early it was written, so only the steps on
     * the wire are asserted whole.
     */
    private static void assertAllProgressBeforeTheAnswer(JsonNode out) {
        List<String> steps = List.of("{\"progress\":1,\"total\":3,\"message\":\"step 1\"}",
                "{\"progress\":2,\"total\":3,\"message\":\"step 2\"}",
                "{\"progress\":3,\"total\":3,\"message\":\"step 3\"}");
        List<String> onWire = new ArrayList<>();
        out.get("progressOnWire").forEach(message -> onWire.add(message.toString()));
        List<String> expected = new ArrayList<>(steps);
        expected.add("\"answer\"");
        assertThat(onWire).isEqualTo(expected);
        List<String> handedOn = new ArrayList<>();
        out.get("progress").forEach(step -> handedOn.add(step.toString()));
        assertThat(steps.subList(0, handedOn.size())).isEqualTo(handedOn);
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
