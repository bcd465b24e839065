package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.gateway.Downstream;
import dev.execache.mcp.server.RawHttp;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@code serve --http} shows of the cache: the dashboard at {@code /} in a real browser
 * (Debian's Chromium driven by playwright-core), {@code /metrics} read by the Prometheus Python
 * client's OpenMetrics parser, and who may read them. One server for the class, with a gateway
 * (the tests' lab server) so that there are tool figures, and a known number of hits and misses
 * made by two agents (two tokens) before any test reads them; tests that read make no calls.
 */
class DashboardIT {
    private static final String AGENT_A = "dash-agent-a-0123456789abcdef";
    private static final String AGENT_B = "dash-agent-b-0123456789abcdef";
    private static final String METRICS_TOKEN = "dash-metrics-0123456789abcdef";

    @TempDir
    static Path dir;

    private static HttpServeProcess server;

    @BeforeAll
    static void startAndMakeKnownCalls() throws Exception {
        Path tokens = dir.resolve("tokens");
        Files.writeString(tokens, "agent-a " + AGENT_A + "\nagent-b " + AGENT_B + "\n");
        Files.setPosixFilePermissions(tokens, PosixFilePermissions.fromString("rw-------"));
        Path config = Files.writeString(dir.resolve("execache.yaml"), """
                servers:
                  lab:
                    command: node
                    args: ["%s"]
                    cache: true  # a local server's reads are asked every time unless it says to cache them
                """.formatted(Downstream.nodeModules().resolveSibling("lab-server.mjs")));
        server = HttpServeProcess.start(Map.of("EXECACHE_WARM_POOL", "0", "EXECACHE_METRICS_TOKEN", METRICS_TOKEN),
                "--store", "memory", "--config", config.toString(), "--http", "127.0.0.1:0",
                "--http-token-file", tokens.toString());
        // a tools/list without a session waits for the lab to be up: a run's key may change while it comes up
        RawHttp.Answer listed = RawHttp.post(server.port(), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}",
                Map.of("Accept", "application/json", "Authorization", "Bearer " + AGENT_A));
        assertThat(listed.body()).contains("lab__get_count");
        // agent a: a run twice (miss, hit), a cached tool three times (miss, hit, hit)
        call(AGENT_A, "execute_code", "{\"code\":\"return 1 + 1\"}", "miss");
        call(AGENT_A, "execute_code", "{\"code\":\"return 1 + 1\"}", "hit");
        call(AGENT_A, "lab__get_count", "{\"who\":\"a\"}", null);
        call(AGENT_A, "lab__get_count", "{\"who\":\"a\"}", null);
        call(AGENT_A, "lab__get_count", "{\"who\":\"a\"}", null);
        // agent b: another run twice (miss, hit), another tool twice (miss, hit)
        call(AGENT_B, "execute_code", "{\"code\":\"return 2 + 2\"}", "miss");
        call(AGENT_B, "execute_code", "{\"code\":\"return 2 + 2\"}", "hit");
        call(AGENT_B, "lab__get_other", "{}", null);
        call(AGENT_B, "lab__get_other", "{}", null);
    }

    @AfterAll
    static void stop() throws InterruptedException {
        if (server != null) {
            server.close();
        }
    }

    /** Calls a tool with a token; for execute_code, checks the cache said {@code expected}. */
    private static JsonNode call(String token, String tool, String arguments, String expected) throws IOException {
        String body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"" + tool
                + "\",\"arguments\":" + arguments + "}}";
        RawHttp.Answer answer = RawHttp.post(server.port(), body, Map.of("Accept", "application/json",
                "Authorization", "Bearer " + token));
        assertThat(answer.status()).as(answer.body()).isEqualTo(200);
        JsonNode result = answer.json().get("result");
        assertThat(result.path("isError").asBoolean()).as(answer.body()).isFalse();
        if (expected != null) {
            assertThat(result.at("/structuredContent/cache").textValue()).as(answer.body()).isEqualTo(expected);
        }
        return result;
    }

    private static RawHttp.Answer get(String path, String token) throws IOException {
        return RawHttp.send(server.port(), "GET", path, null, token == null ? Map.of()
                : Map.of("Authorization", "Bearer " + token));
    }

    @Test
    void theDashboardShowsTheFiguresMadeAndUpdatesAfterMoreCalls() throws Exception {
        Path chromium = SystemPeer.CHROMIUM.require();
        Path scripts = TypeScriptClient.nodeModules().getParent();
        Path screenshots = Path.of("target", "dashboard");
        ProcessBuilder builder = new ProcessBuilder("node", scripts.resolve("dashboard-browser.mjs").toString(),
                "http://127.0.0.1:" + server.port() + "/", AGENT_A, screenshots.toAbsolutePath().toString(),
                chromium.toString())
                .directory(scripts.toFile()).redirectError(ProcessBuilder.Redirect.INHERIT);
        Process browser = builder.start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(browser.getInputStream(), StandardCharsets.UTF_8));
                OutputStream in = browser.getOutputStream()) {
            JsonNode first = TypeScriptClient.JSON.readTree(out.readLine());
            assertThat(first.has("thrown")).as(first.path("thrown").asText()).isFalse();

            call(AGENT_B, "lab__get_count", "{\"who\":\"a\"}", null);
            call(AGENT_B, "lab__get_count", "{\"who\":\"a\"}", null);
            in.write("7\n".getBytes(StandardCharsets.UTF_8));
            in.flush();
            JsonNode second = TypeScriptClient.JSON.readTree(out.readLine());

            assertThat(first.get("asked").booleanValue()).as("the page asks for the token").isTrue();
            assertThat(first.get("hits").textValue()).isEqualTo("5");
            assertThat(first.get("misses").textValue()).isEqualTo("4");
            assertThat(first.get("failed").textValue()).isEqualTo("0");
            assertThat(first.get("hitRate").textValue()).isEqualTo("55.6%");
            assertThat(first.get("state").textValue()).startsWith("healthy");
            assertThat(first.get("tools")).extracting(row -> row.get(0).textValue() + " " + row.get(1).textValue()
                    + " " + row.get(2).textValue()).containsExactly("lab__get_count 3 66.7%", "lab__get_other 2 50.0%");
            assertThat(first.get("agentsEmptyShown").booleanValue()).isFalse();
            assertThat(first.get("agents")).as("each token's name is an agent, with its calls")
                    .extracting(row -> row.get(0).textValue() + " " + row.get(1).textValue())
                    .containsExactly("agent-a 5", "agent-b 4");
            assertThat(first.at("/drawn/calls").intValue()).as("the calls plotted").isPositive();
            assertThat(first.at("/drawn/hitRate").intValue()).as("the hit rate plotted").isPositive();

            assertThat(second.has("thrown")).as(second.path("thrown").asText()).isFalse();
            assertThat(second.get("hits").textValue()).isEqualTo("7");
            assertThat(second.get("misses").textValue()).isEqualTo("4");
            assertThat(second.get("tools").get(0).get(1).textValue()).as("lab__get_count's calls").isEqualTo("5");
            assertThat(second.get("agents")).extracting(row -> row.get(0).textValue() + " " + row.get(1).textValue())
                    .containsExactly("agent-b 6", "agent-a 5");
            assertThat(second.get("errors")).as("console errors").isEmpty();
            assertThat(second.get("phoneOverflow").intValue()).as("no sideways scrolling on a phone").isLessThanOrEqualTo(0);
            assertThat(second.get("tokenKept").booleanValue()).as("the token kept in sessionStorage").isTrue();
            assertThat(second.get("tokenInAUrl").booleanValue()).as("the token never in a URL").isFalse();
        } finally {
            browser.waitFor(60, TimeUnit.SECONDS);
            browser.destroyForcibly();
        }
        assertThat(screenshots.resolveSibling("dashboard-laptop.png")).isNotEmptyFile();
        assertThat(screenshots.resolveSibling("dashboard-phone.png")).isNotEmptyFile();
        assertThat(server.stderr()).noneMatch(line -> line.contains(AGENT_A) || line.contains(METRICS_TOKEN));
    }

    @Test
    void metricsAreReadByThePrometheusOpenMetricsParserWithToolLabels() throws Exception {
        Path python = SystemPeer.OPENMETRICS_PARSER.require();
        RawHttp.Answer metrics = get("/metrics", METRICS_TOKEN);
        assertThat(metrics.status()).as(metrics.body()).isEqualTo(200);
        assertThat(metrics.header("Content-Type")).isEqualTo("application/openmetrics-text; version=1.0.0; charset=utf-8");

        JsonNode families = parseOpenMetrics(python, metrics.body());

        assertThat(families.at("/execache_hits/type").textValue()).isEqualTo("counter");
        assertThat(sample(families, "execache_hits", "execache_hits_total", null)).isGreaterThanOrEqualTo(5);
        assertThat(sample(families, "execache_misses", "execache_misses_total", null)).isEqualTo(4);
        assertThat(sample(families, "execache_store_outage", "execache_store_outage", null)).isZero();
        assertThat(families.at("/execache_tool_hits/type").textValue()).isEqualTo("counter");
        assertThat(families.at("/execache_tool_hits/samples").findValuesAsText("tool"))
                .contains("lab__get_count", "lab__get_other");
        assertThat(sample(families, "execache_tool_misses", "execache_tool_misses_total", "lab__get_other")).isEqualTo(1);
        assertThat(families.at("/execache_saved_seconds/unit").textValue()).isEqualTo("seconds");
        assertThat(families.at("/execache_agent_hits/samples").findValuesAsText("agent")).contains("agent-a", "agent-b");
    }

    /** The families as the parser sees them: name -> type, unit, samples (name, labels, value). */
    private static JsonNode parseOpenMetrics(Path python, String text) throws Exception {
        String script = """
                import json, sys
                from prometheus_client.openmetrics.parser import text_string_to_metric_families
                out = {}
                for family in text_string_to_metric_families(sys.stdin.read()):
                    out[family.name] = {"type": family.type, "unit": family.unit,
                        "samples": [dict(s.labels, __name__=s.name, __value__=s.value) for s in family.samples]}
                print(json.dumps(out))
                """;
        Process parser = new ProcessBuilder(python.toString(), "-c", script).redirectError(ProcessBuilder.Redirect.PIPE)
                .start();
        try (OutputStream in = parser.getOutputStream()) {
            in.write(text.getBytes(StandardCharsets.UTF_8));
        }
        String out = new String(parser.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(parser.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(parser.waitFor()).as("the parser refused the text:\n" + err).isZero();
        return TypeScriptClient.JSON.readTree(out);
    }

    private static double sample(JsonNode families, String family, String name, String tool) {
        List<Double> found = new ArrayList<>();
        families.at("/" + family + "/samples").forEach(sample -> {
            if (sample.get("__name__").textValue().equals(name)
                    && (tool == null || tool.equals(sample.path("tool").textValue()))) {
                found.add(sample.get("__value__").doubleValue());
            }
        });
        assertThat(found).as(family + " " + name + " " + tool + " in " + families.get(family)).hasSize(1);
        return found.get(0);
    }

    @Test
    void theFiguresNeedATokenOfMcpOrOfTheFiguresAndTheFiguresTokenOpensNothingElse() throws Exception {
        String ping = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";

        RawHttp.Answer metricsWithout = get("/metrics", null);
        RawHttp.Answer dataWithout = get("/dashboard.json", null);
        RawHttp.Answer dataWrong = get("/dashboard.json", "not-a-token-0123456789abcdef");
        RawHttp.Answer metricsWithAgent = get("/metrics", AGENT_B);
        RawHttp.Answer dataWithFigures = get("/dashboard.json", METRICS_TOKEN);
        RawHttp.Answer mcpWithFigures = RawHttp.post(server.port(), ping, Map.of("Authorization", "Bearer " + METRICS_TOKEN));
        RawHttp.Answer page = get("/", null);
        RawHttp.Answer script = get("/dashboard.js", null);
        RawHttp.Answer posted = RawHttp.send(server.port(), "POST", "/metrics", "x", Map.of("Authorization",
                "Bearer " + METRICS_TOKEN));
        RawHttp.Answer otherHost = RawHttp.send(server.port(), "GET", "/dashboard.json", null, Map.of("Host",
                "evil.example:" + server.port(), "Authorization", "Bearer " + METRICS_TOKEN));

        assertThat(metricsWithout.status()).isEqualTo(401);
        assertThat(metricsWithout.header("WWW-Authenticate")).startsWith("Bearer");
        assertThat(dataWithout.status()).isEqualTo(401);
        assertThat(dataWrong.status()).isEqualTo(401);
        assertThat(metricsWithAgent.status()).isEqualTo(200);
        assertThat(dataWithFigures.status()).isEqualTo(200);
        assertThat(dataWithFigures.json().at("/totals/misses").longValue()).isEqualTo(4);
        assertThat(mcpWithFigures.status()).as("a figures token does not run code").isEqualTo(401);
        assertThat(page.status()).as("the page loads without a token, and asks for one").isEqualTo(200);
        assertThat(page.header("Content-Type")).startsWith("text/html");
        assertThat(page.header("Content-Security-Policy")).contains("script-src 'self'");
        assertThat(page.body()).contains("data-token-asked=\"true\"").doesNotContain(AGENT_A);
        assertThat(script.status()).isEqualTo(200);
        assertThat(script.header("Content-Type")).startsWith("text/javascript");
        assertThat(posted.status()).isEqualTo(405);
        assertThat(otherHost.status()).as("DNS rebinding").isEqualTo(403);
    }
}
