package dev.execache.cli.telemetry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.execache.cli.settings.UsageException;
import dev.execache.core.spi.Telemetry;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** When the OTEL_* variables ask for telemetry, and what they may not ask for. */
class OpenTelemetryReportingTest {
    @Test
    void nothingIsSetUpWithoutAnExporterOrAnEndpoint() {
        assertThat(OpenTelemetryReporting.configure(Map.of())).isSameAs(Telemetry.NONE);
        // naming the service or the resource asks for nothing to be sent
        assertThat(OpenTelemetryReporting.configure(Map.of("OTEL_SERVICE_NAME", "gateway",
                "OTEL_RESOURCE_ATTRIBUTES", "team=a"))).isSameAs(Telemetry.NONE);
        assertThat(OpenTelemetryReporting.configure(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318",
                "OTEL_SDK_DISABLED", "true"))).isSameAs(Telemetry.NONE);
    }

    @Test
    void anEndpointSetsUpTracingWhoseSpansCarryW3cTraceContext() {
        // spans are made but none is sampled, so nothing is sent (the endpoint listens nowhere)
        Telemetry telemetry = OpenTelemetryReporting.configure(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9",
                "OTEL_TRACES_SAMPLER", "always_off", "OTEL_METRICS_EXPORTER", "none"));
        try {
            assertThat(telemetry).isInstanceOf(OpenTelemetryReporting.class);
            String parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
            try (Telemetry.Span span = telemetry.start("tools/call x", Telemetry.Kind.SERVER,
                    Map.of(Telemetry.TRACEPARENT, parent))) {
                assertThat(telemetry.current().get(Telemetry.TRACEPARENT))
                        .startsWith("00-4bf92f3577b34da6a3ce929d0e0e4736-").doesNotContain("00f067aa0ba902b7");
            }
            assertThat(telemetry.current()).isEmpty();
        } finally {
            ((OpenTelemetryReporting) telemetry).close();
        }
    }

    @Test
    void grpcIsRefusedWithWhatToUseInstead() {
        assertThatThrownBy(() -> OpenTelemetryReporting.configure(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT",
                "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")))
                .isInstanceOf(UsageException.class)
                .hasMessageContaining("OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported")
                .hasMessageContaining("http/protobuf");
    }

    @Test
    void aSettingTheSdkCannotUseIsAUsageErrorNamingIt() {
        assertThatThrownBy(() -> OpenTelemetryReporting.configure(Map.of("OTEL_TRACES_EXPORTER", "carrier-pigeon")))
                .isInstanceOf(UsageException.class)
                .hasMessageContaining("OTEL_* settings")
                .hasMessageContaining("carrier-pigeon");
    }
}
