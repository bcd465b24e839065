package dev.execache.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * The programs from Debian packages that tests drive as real peers, which {@code .ci/run}
 * installs ({@code .ci/install-test-packages}). A test that needs a missing one fails in CI
 * ({@code CI=true}), where passing without it would hide that nothing was tested against it, and
 * is skipped on a developer's machine, saying what to install. {@code EXECACHE_TEST_PEER_NAME}
 * (for example {@code EXECACHE_TEST_PEER_NGINX}) points a peer at another program, or at none.
 */
enum SystemPeer {
    NGINX("nginx", "nginx-light", "/usr/sbin/nginx"),
    CHROMIUM("Chromium", "chromium", "/usr/bin/chromium"),
    /**
     * Debian's Python 3 with the Prometheus client, whose OpenMetrics parser reads /metrics (a
     * pyenv python may not see Debian's package).
     */
    OPENMETRICS_PARSER("the Prometheus client's OpenMetrics parser", "python3-prometheus-client", "/usr/bin/python3") {
        @Override
        boolean works(Path program) {
            try {
                return new ProcessBuilder(program.toString(), "-c", "import prometheus_client")
                        .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor() == 0;
            } catch (IOException e) {
                return false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
    };

    private final String what;
    private final String debianPackage;
    private final Path program;

    SystemPeer(String what, String debianPackage, String program) {
        this.what = what;
        this.debianPackage = debianPackage;
        this.program = Path.of(program);
    }

    /** The peer's program; fails the test in CI, or skips it elsewhere, when it is missing. */
    Path require() {
        return require(System.getenv());
    }

    Path require(Map<String, String> environment) {
        String chosen = environment.get(variable());
        Path path = chosen == null ? program : Path.of(chosen);
        if (Files.isExecutable(path) && works(path)) {
            return path;
        }
        String missing = what + " is missing (" + path + "; Debian package " + debianPackage + ")";
        if ("true".equalsIgnoreCase(environment.get("CI"))) {
            return Assertions.fail(missing + ": in CI every peer the tests drive must be there;"
                    + " .ci/run installs it with .ci/install-test-packages");
        }
        return Assumptions.abort(missing + ": skipped here; install it (sudo apt-get install " + debianPackage
                + ") to run this test, as CI does");
    }

    /** The variable that points this peer at another program: {@code EXECACHE_TEST_PEER_NGINX}, say. */
    String variable() {
        return "EXECACHE_TEST_PEER_" + name().toUpperCase(Locale.ROOT);
    }

    boolean works(Path program) {
        return true;
    }
}
