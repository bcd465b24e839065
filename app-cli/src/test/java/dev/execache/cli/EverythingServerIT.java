package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.gateway.Downstream;
import dev.execache.gateway.Json;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The official reference server ({@code @modelcontextprotocol/server-everything}, pinned) through {@code execache serve}
 * on stdio and over HTTP (the initialize era) as directly: the official TypeScript client 1.x (everything-client.mjs), declaring sampling, elicitation
 * and roots, sees the same tools (the ones the server offers only to such a client too), answers the server's
 * sampling, elicitation and roots requests during the calls that ask them, and gets the same answers, progress,
 * prompts, completion and resources, a subscribed resource's updates and the server's log messages (over HTTP on the
 * session's stream); the split client 2.x in the
 * 2026-07-28 era answers the same requests as input_required results. The server is offered under its own names ({@code prefix: false}).
 * The same server reached at a url (its Streamable HTTP mode, the initialize era) answers the same through execache.
 */
class EverythingServerIT {
    private static final List<String> GATED = List.of("get-roots-list", "trigger-elicitation-request",
            "trigger-sampling-request", "trigger-url-elicitation");

    /**
     * The long operation's answers are kept (a local server's reads are asked every time unless a rule caches them),
     * and the research tool's, which is called as a task.
     */
    private static final String CACHED_OPERATION = """
            tool_calls:
              rules:
                - {tool: "everything__trigger-long-running-operation", ttl_seconds: 300}
                - {tool: "everything__simulate-research-query", ttl_seconds: 300}
            """;

    @TempDir
    static Path dir;

    private static JsonNode direct;
    /** Through execache: on stdio, then over HTTP, then on stdio and over HTTP with the server at a url. */
    private static List<JsonNode> through;
    /** Through execache over HTTP in the 2026-07-28 era (the split TypeScript client 2.x): a command server, a url server. */
    private static List<JsonNode> modern;
    /** The raw tools/list of the 2026-07-28 era over HTTP (the client 2.x drops what that era deleted): command, url. */
    private static final List<JsonNode> MODERN_TOOL_LISTS = new ArrayList<>();
    /**
     * The 2026-07-28 era's tasks extension on the wire (the split client 2.x does not take a task result yet):
     * command, url. See {@link #modernTasks}.
     */
    private static final List<ObjectNode> MODERN_TASKS = new ArrayList<>();
    private static Process atUrl;

    @AfterAll
    static void stop() {
        if (atUrl != null) {
            atUrl.destroy();
        }
    }

    @BeforeAll
    static void askBoth() throws Exception {
        String server = Downstream.nodeModules().resolve("@modelcontextprotocol/server-everything/dist/index.js")
                .toString();
        Path config = Files.writeString(dir.resolve("everything.yaml"), """
                servers:
                  everything:
                    command: node
                    args: ["%s", "stdio"]
                    prefix: false
                %s""".formatted(server, CACHED_OPERATION));
        // the four paths are independent (each serve starts its own server, the url server is asked by one path at a
        // time) and mostly wait (the research tool's stages take a second each): they run at once
        ExecutorService paths = Executors.newFixedThreadPool(4);
        try {
            Future<JsonNode> directly = paths.submit(() -> TypeScriptClient.runScript("everything-client.mjs",
                    List.of("stdio", "node", server, "stdio"), Map.of()));
            Future<JsonNode> onStdio = paths.submit(() -> {
                List<String> arguments = new ArrayList<>(List.of("stdio", ServeProcess.java()));
                arguments.addAll(ServeProcess.command("everything", List.of("--store", "memory", "--config",
                        config.toString())));
                // code inside execute_code calls the server here and over HTTP of the url server: each transport, each
                // kind of server
                return TypeScriptClient.runScript("everything-client.mjs", arguments, Map.of("EXECACHE_WARM_POOL", "0",
                        "EVERYTHING_CODE", "1"));
            });
            Future<List<JsonNode>> overHttp = paths.submit(() -> overHttp(config, Map.of()));
            Future<List<JsonNode>> ofUrl = paths.submit(() -> {
                Path urlConfig = Files.writeString(dir.resolve("everything-url.yaml"), """
                        servers:
                          everything:
                            url: %s
                            prefix: false
                        %s""".formatted(startAtUrl(server), CACHED_OPERATION));
                List<String> arguments = new ArrayList<>(List.of("stdio", ServeProcess.java()));
                arguments.addAll(ServeProcess.command("everything-url", List.of("--store", "memory", "--config",
                        urlConfig.toString())));
                List<JsonNode> answers = new ArrayList<>(List.of(TypeScriptClient.runScript("everything-client.mjs",
                        arguments, Map.of("EXECACHE_WARM_POOL", "0"))));
                answers.addAll(overHttp(urlConfig, Map.of("EVERYTHING_CODE", "1")));
                return answers;
            });
            direct = directly.get();
            List<JsonNode> ofCommand = overHttp.get();
            List<JsonNode> ofUrlAnswers = ofUrl.get();
            JsonNode modernOfCommand = ofCommand.get(1);
            JsonNode modernOfUrl = ofUrlAnswers.get(2);
            MODERN_TOOL_LISTS.addAll(List.of(ofCommand.get(2), ofUrlAnswers.get(3)));
            MODERN_TASKS.addAll(List.of((ObjectNode) ofCommand.get(3), (ObjectNode) ofUrlAnswers.get(4)));
            through = List.of(onStdio.get(), ofCommand.get(0), ofUrlAnswers.get(0), ofUrlAnswers.get(1));
            modern = List.of(modernOfCommand, modernOfUrl);
        } finally {
            paths.shutdownNow();
        }
        for (JsonNode each : modern) {
            assertThat(each.has("thrown")).as(each.path("thrown").asText()).isFalse();
        }
        assertThat(direct.has("thrown")).as(direct.path("thrown").asText()).isFalse();
        for (JsonNode each : through) {
            assertThat(each.has("thrown")).as(each.path("thrown").asText()).isFalse();
        }
    }

    /**
     * Through {@code serve --http} with this config: the client 1.x (with these variables), the split client 2.x, the
     * raw tools/list and tasks of the 2026-07-28 era.
     */
    private static List<JsonNode> overHttp(Path config, Map<String, String> env) throws Exception {
        try (HttpServeProcess http = HttpServeProcess.start(Map.of("EXECACHE_WARM_POOL", "0"), "--store", "memory",
                "--config", config.toString(), "--http", "0")) {
            return List.of(TypeScriptClient.runScript("everything-client.mjs", List.of("http", http.url()), env),
                    TypeScriptClient.runScript("everything-modern-client.mjs", List.of(http.url()), Map.of()),
                    modernToolList(http.url()), modernTasks(http.url()));
        }
    }

    /** One request of the 2026-07-28 era on the wire; its response (of a JSON or an SSE body). */
    private static JsonNode modernRequest(String url, String method, ObjectNode params, boolean tasks) throws Exception {
        ObjectNode meta = params.putObject("_meta");
        meta.put("io.modelcontextprotocol/protocolVersion", "2026-07-28");
        ObjectNode capabilities = meta.putObject("io.modelcontextprotocol/clientCapabilities");
        if (tasks) {
            capabilities.putObject("extensions").putObject("io.modelcontextprotocol/tasks");
        }
        ObjectNode message = Json.MAPPER.createObjectNode().put("jsonrpc", "2.0").put("id", 1).put("method", method);
        message.set("params", params);
        String name = params.has("taskId") ? params.get("taskId").textValue() : params.path("name").asText(null);
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url))
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .header("MCP-Protocol-Version", "2026-07-28")
                .header("Mcp-Method", method);
        if (name != null) {
            request.header("Mcp-Name", name);
        }
        String body = HttpClient.newHttpClient().send(request.POST(HttpRequest.BodyPublishers.ofString(
                Json.write(message))).build(), HttpResponse.BodyHandlers.ofString()).body();
        if (body.startsWith("{")) {
            return Json.MAPPER.readTree(body);
        }
        String data = body.lines().filter(line -> line.startsWith("data: ") && line.contains("\"id\":1"))
                .reduce((first, second) -> second).orElseThrow();
        return Json.MAPPER.readTree(data.substring("data: ".length()));
    }

    /**
     * The reference server's task tool through execache in the 2026-07-28 era: declared, refused to a client without the
     * extension, a task with its result inlined by tasks/get once it completed, and the cached answer as a plain
     * result.
     */
    private static ObjectNode modernTasks(String url) throws Exception {
        ObjectNode seen = Json.MAPPER.createObjectNode();
        seen.set("discover", modernRequest(url, "server/discover", Json.MAPPER.createObjectNode(), false));
        ObjectNode call = Json.MAPPER.createObjectNode().put("name", "simulate-research-query");
        call.putObject("arguments").put("topic", "moths");
        seen.set("withoutExtension", modernRequest(url, "tools/call", call.deepCopy(), false));
        JsonNode created = modernRequest(url, "tools/call", call.deepCopy(), true);
        seen.set("created", created);
        String id = created.at("/result/taskId").textValue();
        ObjectNode get = Json.MAPPER.createObjectNode().put("taskId", id);
        org.awaitility.Awaitility.await("the task completed").atMost(java.time.Duration.ofSeconds(60))
                .pollInterval(java.time.Duration.ofMillis(500))
                .until(() -> modernRequest(url, "tasks/get", get.deepCopy(), true).at("/result/status").textValue(),
                        status -> !"working".equals(status) && !"input_required".equals(status));
        seen.set("completed", modernRequest(url, "tasks/get", get.deepCopy(), true));
        seen.set("getWithoutExtension", modernRequest(url, "tasks/get", get.deepCopy(), false));
        seen.set("cancelEnded", modernRequest(url, "tasks/cancel", get.deepCopy(), true));
        seen.set("again", modernRequest(url, "tools/call", call.deepCopy(), true));
        return seen;
    }

    /** tools/list of the 2026-07-28 era, as it is on the wire. */
    private static JsonNode modernToolList(String url) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(url))
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .header("MCP-Protocol-Version", "2026-07-28")
                .header("Mcp-Method", "tools/list")
                .POST(HttpRequest.BodyPublishers.ofString("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\","
                        + "\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                        + "\"io.modelcontextprotocol/clientCapabilities\":{}}}}"))
                .build();
        HttpResponse<String> response = HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
        return Json.MAPPER.readTree(response.body());
    }

    /** The reference server in its Streamable HTTP mode, on a free port of loopback; returns its url. */
    private static String startAtUrl(String server) throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        ProcessBuilder builder = new ProcessBuilder("node", server, "streamableHttp").redirectErrorStream(true);
        builder.environment().put("PORT", String.valueOf(port));
        atUrl = builder.start();
        BufferedReader out = new BufferedReader(new InputStreamReader(atUrl.getInputStream(),
                StandardCharsets.UTF_8));
        String line;
        while ((line = out.readLine()) != null && !line.contains("listening on port")) {
            // its start-up lines
        }
        assertThat(line).as("the reference server's Streamable HTTP mode did not start").isNotNull();
        Thread drain = new Thread(() -> out.lines().forEach(ignored -> { }), "everything-at-url-out");
        drain.setDaemon(true);
        drain.start();
        return "http://127.0.0.1:" + port + "/mcp";
    }

    @Test
    void theToolsOfferedOnlyToAClientThatCanBeAskedAreOfferedThroughExecache() {
        for (JsonNode through : EverythingServerIT.through) {
            assertThat(names(direct.get("tools"))).hasSize(17).containsAll(GATED);
            assertThat(names(through.get("tools"))).isEqualTo(names(direct.get("tools")));
            // every field, execution too (which the MCP Java SDK's tool type does not know)
            assertThat(through.get("tools")).isEqualTo(direct.get("tools"));
            assertThat(through.at("/tools/0/execution")).isEqualTo(direct.at("/tools/0/execution"));
            assertThat(direct.at("/tools/0/execution").isObject()).isTrue();
        }
    }

    @Test
    void aToolThatMustBeCalledAsATaskIsATaskThroughExecacheAndItsAnswerIsCachedAsAPlainCallsWouldBe() {
        assertThat(direct.at("/tasks/created").textValue()).isEqualTo("working");
        assertThat(direct.at("/tasks/last/type").textValue()).isEqualTo("result");
        assertThat(direct.at("/tasks/last/result/content/0/text").textValue()).contains("# Research Report: owls");
        assertThat(direct.at("/tasks/cancelled").textValue()).isEqualTo("cancelled");
        // directly the server has no cache: the same call is another task
        assertThat(direct.at("/tasks/again/created").textValue()).isEqualTo("working");
        for (JsonNode through : EverythingServerIT.through) {
            String transport = through.get("transport").textValue();
            assertThat(through.at("/tasks/created").textValue()).as(transport).isEqualTo("working");
            assertThat(through.at("/tasks/last")).as(transport).isEqualTo(direct.at("/tasks/last"));
            assertThat(through.at("/tasks/oneId").booleanValue()).isTrue();
            assertThat(through.at("/tasks/listed").booleanValue()).isTrue();
            assertThat(through.at("/tasks/cancelled").textValue()).isEqualTo("cancelled");
            // a rule caches the tool's answers: the same call again is a task completed at once, with the same answer
            assertThat(through.at("/tasks/again/created").textValue()).as(transport).isEqualTo("completed");
            assertThat(through.at("/tasks/again/last")).isEqualTo(direct.at("/tasks/last"));
            if (transport.equals("http")) {
                // over HTTP many agents share execache: one's tasks are not another's
                assertThat(through.at("/tasks/other/get").textValue()).contains("Task not found");
                assertThat(through.at("/tasks/other/listed").intValue()).isZero();
            }
        }
    }

    @Test
    void inThe2026EraATaskToolIsATaskOfTheTasksExtension() {
        assertThat(MODERN_TASKS).hasSize(2);
        for (ObjectNode seen : MODERN_TASKS) {
            assertThat(seen.at("/discover/result/capabilities/extensions/io.modelcontextprotocol~1tasks").isObject())
                    .as("%s", seen.get("discover")).isTrue();
            assertThat(seen.at("/discover/result/capabilities/tasks").isMissingNode()).isTrue();
            // a client without the extension cannot call a tool that must be a task (SEP-2663)
            assertThat(seen.at("/withoutExtension/error/code").intValue()).as("%s", seen).isEqualTo(-32021);
            assertThat(seen.at("/withoutExtension/error/data/requiredCapabilities/extensions")
                    .has("io.modelcontextprotocol/tasks")).isTrue();
            assertThat(seen.at("/created/result/resultType").textValue()).as("%s", seen).isEqualTo("task");
            assertThat(seen.at("/created/result/ttlMs").isNumber()).isTrue();
            assertThat(seen.at("/created/result/task").isMissingNode()).isTrue();
            JsonNode completed = seen.at("/completed/result");
            assertThat(completed.get("status").textValue()).as("%s", completed).isEqualTo("completed");
            assertThat(completed.get("resultType").textValue()).isEqualTo("complete");
            assertThat(completed.at("/result/content/0/text").textValue()).contains("# Research Report: moths");
            assertThat(seen.at("/getWithoutExtension/error/code").intValue()).isEqualTo(-32021);
            assertThat(seen.at("/cancelEnded/result/resultType").textValue()).as("%s", seen).isEqualTo("complete");
            assertThat(seen.at("/cancelEnded/result/taskId").isMissingNode()).isTrue();
            // a rule caches the tool's answers: the same call again is answered by the cache, as a plain result
            assertThat(seen.at("/again/result/resultType").textValue()).as("%s", seen).isEqualTo("complete");
            assertThat(seen.at("/again/result/content")).isEqualTo(completed.at("/result/content"));
        }
    }

    @Test
    void inThe2026EraAToolHasNoExecutionWhichThatRevisionDeleted() {
        assertThat(MODERN_TOOL_LISTS).hasSize(2);
        for (JsonNode list : MODERN_TOOL_LISTS) {
            JsonNode echo = null;
            for (JsonNode tool : list.at("/result/tools")) {
                if (tool.path("name").asText().equals("echo")) {
                    echo = tool;
                }
            }
            assertThat(echo).as("%s", list).isNotNull();
            assertThat(echo.has("execution")).as("%s", echo).isFalse();
            assertThat(echo.get("annotations")).isEqualTo(direct.at("/tools/0/annotations"));
        }
    }

    @Test
    void samplingRequestsReachTheAgentAndTheirAnswersTheServerAndAreNeverCached() {
        for (JsonNode through : EverythingServerIT.through) {
            assertThat(through.at("/asked/sampling")).hasSize(2).isEqualTo(direct.at("/asked/sampling"));
            assertThat(through.at("/asked/sampling/0/messages/0/content/text").textValue())
                    .isEqualTo("Resource trigger-sampling-request context: Say hi");
            assertThat(through.get("sampling")).isEqualTo(direct.get("sampling"));
            assertThat(through.at("/sampling/content/0/text").textValue()).contains("sampled 1");
            // the same call again asks the agent again
            assertThat(through.at("/samplingAgain/content/0/text").textValue()).contains("sampled 2");
            assertThat(through.at("/cache/sampling").textValue()).isEqualTo("bypass");
            assertThat(through.at("/cache/samplingAgain").textValue()).isEqualTo("bypass");
        }
    }

    @Test
    void elicitationRequestsReachTheAgentWithTheirSchemaAndTheAnswerReachesTheServer() throws IOException {
        for (JsonNode through : EverythingServerIT.through) {
            assertThat(through.at("/asked/elicitation")).hasSize(1).isEqualTo(direct.at("/asked/elicitation"));
            completedWithDefaults(through.get("elicitation"), through.at("/asked/elicitation/0"));
            assertThat(through.at("/elicitation/content/1/text").textValue()).contains("Name: Ada Lovelace");
        }
    }

    /**
     * The server got the agent's answer with the defaults of the fields it left out filled in (the direct client's
     * answer is sent as it gave it): the reference server echoes what it got as "Raw result".
     */
    private static void completedWithDefaults(JsonNode toolResult, JsonNode asked) throws IOException {
        String raw = toolResult.at("/content/2/text").textValue();
        JsonNode got = TypeScriptClient.JSON.readTree(raw.substring(raw.indexOf('{')));
        String agentsRaw = direct.at("/elicitation/content/2/text").textValue();
        ObjectNode expected = TypeScriptClient.JSON.readTree(agentsRaw.substring(agentsRaw.indexOf('{')))
                .get("content").deepCopy();
        asked.at("/requestedSchema/properties").properties().forEach(field -> {
            if (field.getValue().has("default") && !expected.has(field.getKey())) {
                expected.set(field.getKey(), field.getValue().get("default"));
            }
        });
        assertThat(expected.size()).as("the schema has defaults the agent left out").isGreaterThan(3);
        assertThat(got.get("action").textValue()).isEqualTo("accept");
        assertThat(got.get("content")).isEqualTo(expected);
    }

    @Test
    void theServerAsksTheAgentForItsRoots() {
        // the reference server asks for roots as the session starts and again to answer the tool, when its first
        // answer has not come yet: once or twice, directly as through execache
        assertThat(direct.at("/asked/roots").intValue()).isBetween(1, 2);
        for (JsonNode through : EverythingServerIT.through) {
            assertThat(through.at("/asked/roots").intValue()).isBetween(1, 2);
            assertThat(through.get("roots")).isEqualTo(direct.get("roots"));
            assertThat(through.at("/roots/content/0/text").textValue()).contains("file:///work/project");
        }
    }

    @Test
    void progressAnswersPromptsCompletionAndResourcesAreTheServersOwn() {
        for (JsonNode through : EverythingServerIT.through) {
            for (String answer : List.of("progressResult", "echo", "prompts", "prompt", "completion")) {
                assertThat(through.get(answer)).as(answer).isEqualTo(direct.get(answer));
            }
            // the server reports progress 1, 2, 3 of 3; the last may come after the answer, which a client drops
            for (JsonNode progress : List.of(direct.get("progress"), through.get("progress"))) {
                assertThat((ArrayNode) progress).hasSizeBetween(2, 3);
                for (int step = 0; step < progress.size(); step++) {
                    assertThat(progress.get(step).get("progress").intValue()).isEqualTo(step + 1);
                    assertThat(progress.get(step).get("total").intValue()).isEqualTo(3);
                }
            }
            // the text resource says when it was made
            JsonNode read = through.at("/resource/contents/0");
            assertThat(read.get("uri")).isEqualTo(direct.at("/resource/contents/0/uri"));
            assertThat(read.get("mimeType")).isEqualTo(direct.at("/resource/contents/0/mimeType"));
            assertThat(read.get("text").textValue()).startsWith("Resource 1: This is a plaintext resource created at");
        }
    }

    /**
     * Code inside execute_code calls the server's tools: the progress of the long operation reaches the agent under
     * the run's token (progress counting the run's notifications, the message naming the tool), its second call,
     * answered from the cache, reports none; the server's sampling request during the last call reaches the agent
     * that ran the code (initialize era), and the run, which depended on its answer, is not stored.
     */
    @Test
    void codeInsideExecuteCodeReportsItsCallsProgressAndItsServersAskTheAgentThatRanIt() {
        // on stdio with the command server, over HTTP with the url server
        for (JsonNode through : List.of(EverythingServerIT.through.get(0), EverythingServerIT.through.get(3))) {
            JsonNode code = through.get("code");
            assertThat(code).as(through.get("transport").textValue()).isNotNull();
            assertThat(code.get("isError").booleanValue()).as(code.toString()).isFalse();
            JsonNode run = code.get("run");
            assertThat(run.at("/result/first").textValue())
                    .isEqualTo("Long running operation completed. Duration: 0.2 seconds, Steps: 2.");
            assertThat(run.at("/result/again")).isEqualTo(run.at("/result/first"));
            assertThat(run.at("/result/sampled").textValue()).contains("sampled for code");
            List<String> statuses = new ArrayList<>();
            run.get("toolCalls").forEach(call -> statuses.add(call.get("cache").textValue()));
            assertThat(statuses).containsExactly("miss", "hit", "bypass");
            assertThat(run.get("notStored").textValue()).startsWith("everything__trigger-sampling-request is not cached");
            assertThat(through.at("/asked/fromCode")).hasSize(1);
            assertThat(through.at("/asked/fromCode/0/messages/0/content/text").textValue())
                    .isEqualTo("Resource trigger-sampling-request context: Asked from code");
            assertThat(innerProgress(code)).as(code.toString()).containsExactly(
                    "everything__trigger-long-running-operation: 1/2", "everything__trigger-long-running-operation: 2/2");
        }
    }

    /** On the command line no agent can answer: the server's sampling request is refused at once, saying why. */
    @Test
    void onTheCommandLineAServersRequestForTheAgentIsRefusedSayingWhy() throws Exception {
        Files.writeString(dir.resolve("ask.ts"), "return await tools.everything[\"trigger-sampling-request\"]("
                + "{prompt: \"Asked from the command line\", maxTokens: 20});\n");

        CliProcess.Result result = new CliProcess(dir).run("run", "ask.ts", "--store", "memory", "--config",
                dir.resolve("everything.yaml").toString());

        assertThat(result.exitCode()).as(result.stdout() + result.stderr()).isEqualTo(1);
        assertThat(result.stdout() + result.stderr()).contains("no agent can be asked sampling/createMessage")
                .doesNotContain("TimeoutError");
    }

    @Test
    void inThe2026EraTheServersRequestsReachTheAgentAsInputRequiredResults() throws IOException {
        for (JsonNode modern : EverythingServerIT.modern) {
            inputRequiredResults(modern);
        }
    }

    private static void inputRequiredResults(JsonNode modern) throws IOException {
        assertThat(modern.get("era").textValue()).isEqualTo("modern");
        // the client's handlers answered each server request once, through input_required and a retry
        assertThat(modern.at("/asked/sampling")).hasSize(1);
        assertThat(modern.at("/asked/sampling/0")).isEqualTo(direct.at("/asked/sampling/0"));
        assertThat(modern.at("/asked/elicitation")).isEqualTo(direct.at("/asked/elicitation"));
        // the server is shared by every agent and keeps the first roots it got (the client 1.x's, asked before), so it
        // may ask this agent none; the answer is the same roots
        assertThat(modern.at("/asked/roots").intValue()).isBetween(0, 2);
        for (String answer : List.of("sampling", "roots")) {
            assertThat(modern.get(answer)).as(answer).isEqualTo(direct.get(answer));
        }
        completedWithDefaults(modern.get("elicitation"), modern.at("/asked/elicitation/0"));
        // code inside execute_code has no input_required of its own: the server's request is refused, saying why
        assertThat(modern.at("/code/isError").booleanValue()).as(modern.get("code").toString()).isFalse();
        assertThat(modern.at("/code/run/result/refused").textValue())
                .contains("no agent can be asked sampling/createMessage");
        assertThat(innerProgress(modern.get("code"))).containsExactly("everything__trigger-long-running-operation: 1/2",
                "everything__trigger-long-running-operation: 2/2");
    }

    /** The messages of a run's progress that its calls' servers sent (not "running for"), each counting one more. */
    private static List<String> innerProgress(JsonNode code) {
        List<String> messages = new ArrayList<>();
        int last = 0;
        for (JsonNode step : code.get("progress")) {
            assertThat(step.get("progress").intValue()).as(code.toString()).isGreaterThan(last);
            last = step.get("progress").intValue();
            assertThat(step.has("total")).isFalse();
            if (!step.get("message").textValue().startsWith("running for ")) {
                messages.add(step.get("message").textValue());
            }
        }
        return messages;
    }

    @Test
    void aSubscribedResourcesUpdatesReachTheAgent() {
        assertThat(direct.at("/updated/uri").textValue()).isEqualTo("demo://resource/dynamic/text/1");
        for (JsonNode through : EverythingServerIT.through) {
            assertThat(through.get("updated")).as(through.get("transport").textValue()).isEqualTo(direct.get("updated"));
            for (String answer : List.of("subscribed", "unsubscribed")) {
                assertThat(through.get(answer)).as(answer).isEqualTo(direct.get(answer));
            }
        }
    }

    @Test
    void theServersLogMessagesReachTheAgentAtItsLevelTaggedWithTheServersName() {
        // the server picks each simulated message's level at random; the client asked for debug, so every one comes
        JsonNode first = simulated(direct);
        assertThat(first).as("a simulated log message, directly").isNotNull();
        assertThat(first.has("logger")).isFalse();
        for (JsonNode through : EverythingServerIT.through) {
            JsonNode log = simulated(through);
            assertThat(log).as("%s: %s", through.get("transport").textValue(), through.get("logs")).isNotNull();
            assertThat(log.get("logger").textValue()).isEqualTo("everything");
            assertThat(log.get("data").textValue().toLowerCase()).startsWith(log.get("level").textValue());
        }
    }

    /**
     * The first of the server's simulated log messages ("Info-level message", ...; with the session's id when the
     * server has one), null for none.
     */
    private static JsonNode simulated(JsonNode out) {
        for (JsonNode log : out.get("logs")) {
            if (log.path("data").asText().matches(".*(-level message|level-message)( - SessionId .*)?")) {
                return log;
            }
        }
        return null;
    }

    private static List<String> names(JsonNode tools) {
        List<String> names = new ArrayList<>();
        tools.forEach(tool -> names.add(tool.get("name").textValue()));
        return names;
    }
}
