package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.trace.v1.Span;
import dev.execache.gateway.Downstream;
import dev.execache.mcp.server.RawHttp;
import dev.execache.tools.mcp.HttpLab;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code serve --http} with OpenTelemetry configured by {@code OTEL_*} variables, exporting over OTLP
 * (HTTP/protobuf) to a receiver of the test's own that decodes what arrives with the OTLP protobuf
 * classes; and one without any {@code OTEL_*} variable, which exports nothing and says nothing about it.
 * One of each for the class, with the lab server behind both.
 */
class ServeTracingIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Map<String, String> ACCEPT_JSON = Map.of("Accept", "application/json");
    private static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final String CLIENT_SPAN = "00f067aa0ba902b7";

    @TempDir
    static Path dir;

    private static HttpServer receiver;
    private static final List<Span> SPANS = new CopyOnWriteArrayList<>();
    private static final List<Metric> METRICS = new CopyOnWriteArrayList<>();
    private static HttpServeProcess traced;
    private static HttpServeProcess untraced;
    private static HttpLab web;

    @BeforeAll
    static void start() throws Exception {
        receiver = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        receiver.createContext("/v1/traces", exchange -> {
            try (InputStream body = exchange.getRequestBody()) {
                ExportTraceServiceRequest.parseFrom(body).getResourceSpansList().forEach(resource ->
                        resource.getScopeSpansList().forEach(scope -> SPANS.addAll(scope.getSpansList())));
            }
            answer(exchange, ExportTraceServiceResponse.getDefaultInstance().toByteArray());
        });
        receiver.createContext("/v1/metrics", exchange -> {
            try (InputStream body = exchange.getRequestBody()) {
                ExportMetricsServiceRequest.parseFrom(body).getResourceMetricsList().forEach(resource ->
                        resource.getScopeMetricsList().forEach(scope -> METRICS.addAll(scope.getMetricsList())));
            }
            answer(exchange, ExportMetricsServiceResponse.getDefaultInstance().toByteArray());
        });
        receiver.start();
        web = HttpLab.start("--era", "2026");
        Path config = Files.writeString(dir.resolve("gateway.yaml"), """
                servers:
                  lab:
                    command: node
                    args: ["%s"]
                  web:
                    url: "%s"
                """.formatted(Downstream.nodeModules().resolveSibling("lab-server.mjs"), web.url()));
        traced = HttpServeProcess.start(Map.of("EXECACHE_WARM_POOL", "0",
                        "OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:" + receiver.getAddress().getPort(),
                        "OTEL_SERVICE_NAME", "execache-under-test",
                        // sent soon rather than every 5 s / 60 s: the test waits for them
                        "OTEL_BSP_SCHEDULE_DELAY", "100", "OTEL_METRIC_EXPORT_INTERVAL", "500"),
                "--store", "memory", "--config", config.toString(), "--http", "0");
        untraced = HttpServeProcess.start(Map.of("EXECACHE_WARM_POOL", "0"),
                "--store", "memory", "--config", config.toString(), "--http", "0");
    }

    @AfterAll
    static void stop() throws InterruptedException {
        if (traced != null) {
            traced.close();
        }
        if (untraced != null) {
            untraced.close();
        }
        if (receiver != null) {
            receiver.stop(0);
        }
        if (web != null) {
            web.stop();
        }
    }

    @Test
    void oneTraceGoesFromTheClientsTraceparentThroughTheRunToTheDownstreamServer() throws Exception {
        String call = """
                {"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"execute_code",
                 "arguments":{"code":"return await tools.lab.trace_context({})"},
                 "_meta":{"traceparent":"00-%s-%s-01","tracestate":"rojo=00f067aa0ba902b7"}}}
                """.formatted(TRACE_ID, CLIENT_SPAN);

        JsonNode answer = RawHttp.post(traced.port(), call, ACCEPT_JSON).json();

        JsonNode seen = answer.at("/result/structuredContent/result");
        assertThat(seen.path("traceparent").textValue()).as(answer.toString()).startsWith("00-" + TRACE_ID + "-");
        assertThat(seen.path("tracestate").textValue()).isEqualTo("rojo=00f067aa0ba902b7");
        // the request's span ends last: it may come in a later batch than its children
        await().atMost(Duration.ofSeconds(60)).until(() -> spanNamed("tools/call execute_code").isPresent()
                && spanNamed("tools/call trace_context").isPresent());
        Span request = spanNamed("tools/call execute_code").orElseThrow();
        assertThat(hex(request.getTraceId().toByteArray())).isEqualTo(TRACE_ID);
        assertThat(hex(request.getParentSpanId().toByteArray())).isEqualTo(CLIENT_SPAN);
        assertThat(request.getKind()).isEqualTo(Span.SpanKind.SPAN_KIND_SERVER);
        assertThat(attributes(request)).containsEntry("mcp.method.name", "tools/call")
                .containsEntry("gen_ai.tool.name", "execute_code")
                .containsEntry("gen_ai.operation.name", "execute_tool")
                .containsEntry("jsonrpc.request.id", "7")
                .containsEntry("network.transport", "tcp")
                .doesNotContainKey("error.type");
        Span lookup = childOf(request, "cache lookup");
        assertThat(attributes(lookup)).containsEntry("execache.cache.result", "miss");
        Span run = childOf(request, "deno run");
        Span codeCall = childOf(run, "execute_tool lab__trace_context");
        assertThat(attributes(codeCall)).containsEntry("gen_ai.tool.name", "lab__trace_context");
        Span downstream = childOf(codeCall, "tools/call trace_context");
        assertThat(downstream.getKind()).isEqualTo(Span.SpanKind.SPAN_KIND_CLIENT);
        assertThat(attributes(downstream)).containsEntry("mcp.method.name", "tools/call")
                .containsEntry("gen_ai.tool.name", "trace_context").containsEntry("execache.server", "lab");
        // the downstream server's parent is execache's call to it
        assertThat(seen.path("traceparent").textValue())
                .isEqualTo("00-" + TRACE_ID + "-" + hex(downstream.getSpanId().toByteArray()) + "-01");
    }

    @Test
    void aUrlServerGetsTheTraceContextInItsRequestsMetaAndHeaders() throws Exception {
        String traceId = "7af7651916cd43dd8448eb211c80319c";
        String call = "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"web__trace_context\","
                + "\"arguments\":{},\"_meta\":{\"traceparent\":\"00-" + traceId + "-" + CLIENT_SPAN + "-01\"}}}";

        JsonNode answer = RawHttp.post(traced.port(), call, ACCEPT_JSON).json();

        JsonNode seen = JSON.readTree(answer.at("/result/content/0/text").textValue());
        assertThat(seen.path("meta").textValue()).as(answer.toString()).startsWith("00-" + traceId + "-")
                .doesNotContain(CLIENT_SPAN);
        assertThat(seen.path("header").textValue()).isEqualTo(seen.path("meta").textValue());
    }

    @Test
    void aTraceparentHeaderIsTheParentWhenMetaCarriesNoneAndErrorsAreMarked() throws Exception {
        String traceId = "0af7651916cd43dd8448eb211c80319c";
        String call = "{\"jsonrpc\":\"2.0\",\"id\":\"header\",\"method\":\"tools/call\",\"params\":{\"name\":\"lab__fail\","
                + "\"arguments\":{}}}";

        JsonNode answer = RawHttp.post(traced.port(), call, Map.of("Accept", "application/json",
                "traceparent", "00-" + traceId + "-b7ad6b7169203331-01")).json();

        assertThat(answer.at("/result/isError").booleanValue()).as(answer.toString()).isTrue();
        await().atMost(Duration.ofSeconds(60)).until(() -> SPANS.stream().anyMatch(span ->
                span.getName().equals("tools/call lab__fail") && hex(span.getTraceId().toByteArray()).equals(traceId)));
        Span request = SPANS.stream().filter(span -> span.getName().equals("tools/call lab__fail")).findFirst().orElseThrow();
        assertThat(hex(request.getParentSpanId().toByteArray())).isEqualTo("b7ad6b7169203331");
        assertThat(attributes(request)).containsEntry("jsonrpc.request.id", "header")
                .containsEntry("error.type", "tool_error");
        assertThat(request.getStatus().getCode()).isEqualTo(io.opentelemetry.proto.trace.v1.Status.StatusCode.STATUS_CODE_ERROR);
    }

    @Test
    void requestDurationsAndTheCachesCountersAreExportedAsMetrics() throws Exception {
        String call = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"execute_code\","
                + "\"arguments\":{\"code\":\"return 'metrics'\"}}}";

        RawHttp.post(traced.port(), call, ACCEPT_JSON);
        RawHttp.post(traced.port(), call, ACCEPT_JSON);

        await().atMost(Duration.ofSeconds(60)).until(() -> sum("execache.hits") >= 1 && sum("execache.misses") >= 1);
        Metric duration = METRICS.stream().filter(metric -> metric.getName().equals("mcp.server.operation.duration"))
                .reduce((first, last) -> last).orElseThrow();
        assertThat(duration.getUnit()).isEqualTo("s");
        assertThat(duration.getHistogram().getDataPointsList()).anySatisfy(point -> {
            assertThat(point.getAttributesList().stream().collect(Collectors.toMap(KeyValue::getKey,
                    value -> value.getValue().getStringValue()))).containsEntry("mcp.method.name", "tools/call")
                    .containsEntry("gen_ai.tool.name", "execute_code");
            assertThat(point.getCount()).isGreaterThanOrEqualTo(2);
        });
        assertThat(METRICS).extracting(Metric::getName).contains("execache.calls", "execache.saved_time");
    }

    @Test
    void withoutOtelSettingsNothingIsTracedNorSaid() throws Exception {
        String call = """
                {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute_code",
                 "arguments":{"code":"return await tools.lab.trace_context({})"},
                 "_meta":{"traceparent":"00-%s-%s-01"}}}
                """.formatted("5" + TRACE_ID.substring(1), CLIENT_SPAN);

        JsonNode answer = RawHttp.post(untraced.port(), call, ACCEPT_JSON).json();

        // no span was made, so none is passed on (and nothing is made up)
        assertThat(answer.at("/result/structuredContent/result/traceparent").isNull()).as(answer.toString()).isTrue();
        assertThat(untraced.stderr()).noneMatch(line -> line.toLowerCase(Locale.ROOT).contains("opentelemetry")
                || line.contains("OTLP") || line.toLowerCase(Locale.ROOT).contains("failed to export"));
        assertThat(traced.stderr()).anyMatch(line -> line.contains("OpenTelemetry"))
                .noneMatch(line -> line.toLowerCase(Locale.ROOT).contains("failed to export"));
    }

    private static Optional<Span> spanNamed(String name) {
        return SPANS.stream().filter(span -> span.getName().equals(name)
                && hex(span.getTraceId().toByteArray()).equals(TRACE_ID)).findFirst();
    }

    private static Span childOf(Span parent, String name) {
        return SPANS.stream().filter(span -> span.getName().equals(name) && span.getParentSpanId().equals(parent.getSpanId()))
                .findFirst().orElseThrow(() -> new AssertionError("no span " + name + " under " + parent.getName()
                        + "; spans: " + SPANS.stream().map(Span::getName).toList()));
    }

    private static Map<String, String> attributes(Span span) {
        return span.getAttributesList().stream().collect(Collectors.toMap(KeyValue::getKey,
                value -> value.getValue().hasIntValue() ? Long.toString(value.getValue().getIntValue())
                        : value.getValue().getStringValue()));
    }

    /** The last exported total of a monotonic counter, over its points (cumulative temporality). */
    private static long sum(String name) {
        return METRICS.stream().filter(metric -> metric.getName().equals(name)).reduce((first, last) -> last)
                .map(metric -> metric.getSum().getDataPointsList().stream().mapToLong(point -> point.getAsInt()).sum())
                .orElse(0L);
    }

    private static String hex(byte[] bytes) {
        return HexFormat.of().formatHex(bytes);
    }

    private static void answer(com.sun.net.httpserver.HttpExchange exchange, byte[] body) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", "application/x-protobuf");
        exchange.sendResponseHeaders(200, body.length);
        exchange.getResponseBody().write(body);
        exchange.close();
    }
}
