package dev.execache.cli.telemetry;

import dev.execache.cli.settings.UsageException;
import dev.execache.core.spi.Counter;
import dev.execache.core.spi.Telemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.api.metrics.DoubleCounter;
import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.spi.ConfigurationException;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@link Telemetry} over OpenTelemetry, configured the standard way: the SDK's autoconfiguration
 * reads the {@code OTEL_*} variables (endpoint, protocol, headers, sampler, resource, service name).
 * Nothing is set up unless one of {@link #ASKING} is set, so a person who never asked for tracing
 * gets no exporter and no exporter's errors.
 */
public final class OpenTelemetryReporting implements Telemetry, AutoCloseable {
    /** The variables that ask for telemetry: an exporter or an OTLP endpoint. */
    static final List<String> ASKING = List.of("OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER",
            "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT");
    /** The variables that choose the OTLP protocol. */
    private static final List<String> PROTOCOLS = List.of("OTEL_EXPORTER_OTLP_PROTOCOL",
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL");
    private static final String SCOPE = "dev.execache";
    private static final AttributeKey<String> TOOL = AttributeKey.stringKey("gen_ai.tool.name");
    private static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");
    /** The attributes of a request's span that {@code mcp.server.operation.duration} keeps (low cardinality). */
    private static final List<String> DURATION_ATTRIBUTES = List.of("mcp.method.name", "gen_ai.tool.name",
            "gen_ai.prompt.name", "gen_ai.operation.name", "mcp.protocol.version", "network.transport");
    /** The buckets the MCP semantic conventions advise for {@code mcp.server.operation.duration}, in seconds. */
    private static final List<Double> DURATION_BUCKETS = List.of(0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0,
            30.0, 60.0, 120.0, 300.0);
    private static final TextMapGetter<Map<String, String>> FIELDS = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Map<String, String> carrier) {
            return carrier.keySet();
        }

        @Override
        public String get(Map<String, String> carrier, String key) {
            return carrier == null ? null : carrier.get(key);
        }
    };

    private final OpenTelemetrySdk sdk;
    private final Tracer tracer;
    private final DoubleHistogram operationDuration;
    private final Map<Counter, LongCounter> counters = new EnumMap<>(Counter.class);
    private final DoubleCounter savedTime;

    private OpenTelemetryReporting(OpenTelemetrySdk sdk) {
        this.sdk = sdk;
        this.tracer = sdk.getTracer(SCOPE);
        Meter meter = sdk.getMeter(SCOPE);
        this.operationDuration = meter.histogramBuilder("mcp.server.operation.duration").setUnit("s")
                .setDescription("MCP request duration as observed on the receiver from the time it was received"
                        + " until the result was sent.")
                .setExplicitBucketBoundariesAdvice(DURATION_BUCKETS).build();
        this.savedTime = meter.counterBuilder("execache.saved_time").ofDoubles().setUnit("s")
                .setDescription("Latency saved by hits, counted by this instance.").build();
        for (Counter counter : Counter.values()) {
            if (counter != Counter.SAVED_NANOS) {
                counters.put(counter, meter.counterBuilder(metricName(counter)).setUnit(unit(counter))
                        .setDescription("The cache's " + counter.name().toLowerCase(Locale.ROOT).replace('_', ' ')
                                + " counter, counted by this instance.").build());
            }
        }
    }

    /**
     * Telemetry as {@code environment}'s {@code OTEL_*} variables configure it, or {@link Telemetry#NONE}
     * when none of them asks for it (or {@code OTEL_SDK_DISABLED=true}).
     */
    public static Telemetry configure(Map<String, String> environment) {
        if ("true".equalsIgnoreCase(environment.get("OTEL_SDK_DISABLED"))
                || ASKING.stream().noneMatch(name -> !environment.getOrDefault(name, "").isBlank())) {
            return Telemetry.NONE;
        }
        for (String name : PROTOCOLS) {
            if (environment.getOrDefault(name, "").trim().equals("grpc")) {
                throw new UsageException(name + "=grpc is not supported: execache sends OTLP over HTTP"
                        + " (http/protobuf, the default; a collector listens for it on port 4318)");
            }
        }
        Map<String, String> properties = new HashMap<>();
        // execache writes no logs to OpenTelemetry: no logs exporter unless one is named
        properties.put("otel.logs.exporter", "none");
        properties.put("otel.service.name", "execache");
        // the JDK's HttpClient sends OTLP over HTTP; the SDK's own default (grpc) needs another client
        properties.put("otel.exporter.otlp.protocol", "http/protobuf");
        // the command's environment (the resident server serves other processes' commands), as the
        // SDK's property names: OTEL_EXPORTER_OTLP_ENDPOINT is otel.exporter.otlp.endpoint
        environment.forEach((name, value) -> {
            if (name.startsWith("OTEL_")) {
                properties.put(name.toLowerCase(Locale.ROOT).replace('_', '.'), value);
            }
        });
        try {
            OpenTelemetrySdk sdk = AutoConfiguredOpenTelemetrySdk.builder()
                    .addPropertiesSupplier(() -> properties)
                    .disableShutdownHook()
                    .build()
                    .getOpenTelemetrySdk();
            return new OpenTelemetryReporting(sdk);
        } catch (ConfigurationException e) {
            throw new UsageException("the OTEL_* settings are not usable: " + e.getMessage(), e);
        }
    }

    @Override
    public Telemetry.Span start(String name, Kind kind, Map<String, String> parent) {
        Context parentContext = parent.isEmpty() ? Context.current()
                : W3CTraceContextPropagator.getInstance().extract(Context.root(), parent, FIELDS);
        io.opentelemetry.api.trace.Span span = tracer.spanBuilder(name).setSpanKind(spanKind(kind)).setParent(parentContext).startSpan();
        return new OpenSpan(span, span.makeCurrent(), kind == Kind.SERVER ? System.nanoTime() : -1);
    }

    @Override
    public Map<String, String> current() {
        if (!io.opentelemetry.api.trace.Span.current().getSpanContext().isValid()) {
            return Map.of();
        }
        Map<String, String> fields = new LinkedHashMap<>();
        W3CTraceContextPropagator.getInstance().inject(Context.current(), fields, Map::put);
        return fields;
    }

    @Override
    public void counted(String tool, Map<Counter, Long> counts) {
        Attributes attributes = tool == null ? Attributes.empty() : Attributes.of(TOOL, tool);
        counts.forEach((counter, delta) -> {
            if (counter == Counter.SAVED_NANOS) {
                savedTime.add(delta / 1e9, attributes);
            } else if (counters.containsKey(counter) && delta > 0) {
                counters.get(counter).add(delta, attributes);
            }
        });
    }

    /** Sends what is still buffered and stops the exporters. */
    @Override
    public void close() {
        sdk.close();
    }

    /**
     * The OpenTelemetry name of a counter: {@code execache.hits}, {@code execache.invalidations}, ...;
     * the counts by cause and by reason keep the name the figures use ({@code execache.invalidated_by_write}).
     */
    static String metricName(Counter counter) {
        return "execache." + counter.name().toLowerCase(Locale.ROOT);
    }

    private static String unit(Counter counter) {
        return counter == Counter.TOOL_ANSWER_BYTES || counter == Counter.KEPT_OUT_BYTES ? "By" : "1";
    }

    private static SpanKind spanKind(Kind kind) {
        return switch (kind) {
            case SERVER -> SpanKind.SERVER;
            case CLIENT -> SpanKind.CLIENT;
            case INTERNAL -> SpanKind.INTERNAL;
        };
    }

    /** One span and its scope; a request's span also records its duration when it ends. */
    private final class OpenSpan implements Telemetry.Span {
        private final io.opentelemetry.api.trace.Span span;
        private final Scope scope;
        /** When a request's span started, by {@link System#nanoTime()}; -1 for other spans. */
        private final long started;
        private final AttributesBuilder durationAttributes = Attributes.builder();

        OpenSpan(io.opentelemetry.api.trace.Span span, Scope scope, long started) {
            this.span = span;
            this.scope = scope;
            this.started = started;
        }

        @Override
        public Telemetry.Span set(String attribute, String value) {
            if (value != null) {
                span.setAttribute(attribute, value);
                if (started >= 0 && DURATION_ATTRIBUTES.contains(attribute)) {
                    durationAttributes.put(attribute, value);
                }
            }
            return this;
        }

        @Override
        public Telemetry.Span set(String attribute, long value) {
            span.setAttribute(attribute, value);
            return this;
        }

        @Override
        public void failed(String type, String message) {
            span.setAttribute(ERROR_TYPE, type);
            span.setStatus(StatusCode.ERROR, message == null ? "" : message);
            if (started >= 0) {
                durationAttributes.put(ERROR_TYPE, type);
            }
        }

        @Override
        public void close() {
            try {
                scope.close();
            } finally {
                span.end();
                if (started >= 0) {
                    operationDuration.record((System.nanoTime() - started) / 1e9, durationAttributes.build());
                }
            }
        }
    }
}
