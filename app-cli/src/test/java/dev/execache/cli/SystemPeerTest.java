package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

/** A missing peer fails a test in CI and skips it elsewhere, naming the package either way. */
class SystemPeerTest {
    private static final String MISSING = "/nonexistent/execache-test/nginx";

    @Test
    void aMissingPeerFailsTheTestInCiNamingItsPackage() {
        Map<String, String> ci = Map.of("CI", "true", SystemPeer.NGINX.variable(), MISSING);

        assertThatThrownBy(() -> SystemPeer.NGINX.require(ci))
                .isInstanceOf(AssertionFailedError.class)
                .hasMessageContaining("nginx is missing")
                .hasMessageContaining(MISSING)
                .hasMessageContaining("Debian package nginx-light")
                .hasMessageContaining(".ci/run");
    }

    @Test
    void aMissingPeerSkipsTheTestOnADevelopersMachineSayingWhatToInstall() {
        Map<String, String> here = Map.of(SystemPeer.NGINX.variable(), MISSING);

        assertThatThrownBy(() -> SystemPeer.NGINX.require(here))
                .isInstanceOf(TestAbortedException.class)
                .hasMessageContaining("nginx is missing")
                .hasMessageContaining("sudo apt-get install nginx-light");
    }

    @Test
    void aPythonWithoutThePrometheusClientIsNoOpenMetricsParser() {
        Map<String, String> ci = Map.of("CI", "true", SystemPeer.OPENMETRICS_PARSER.variable(), "/bin/false");

        assertThatThrownBy(() -> SystemPeer.OPENMETRICS_PARSER.require(ci))
                .isInstanceOf(AssertionFailedError.class)
                .hasMessageContaining("Debian package python3-prometheus-client");
    }

    @Test
    void aPeerThatIsThereIsGiven() {
        Map<String, String> ci = Map.of("CI", "true", SystemPeer.NGINX.variable(), "/bin/true");

        assertThat(SystemPeer.NGINX.require(ci)).isEqualTo(Path.of("/bin/true"));
    }
}
