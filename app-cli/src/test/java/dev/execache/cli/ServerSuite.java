package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Runs a command-line suite through one resident server: started before the suite, checked
 * after it to be the same process and to have served the commands, then stopped.
 */
final class ServerSuite {
    private static final Pattern PID = Pattern.compile("(?m)^pid +(\\d+)$");
    private static final Pattern SERVED = Pattern.compile("(?m)^served +(\\d+) commands");

    private final Path runtime;
    private long pid;

    ServerSuite(Path runtime) {
        this.runtime = runtime;
    }

    void start() throws Exception {
        start(Map.of());
    }

    /** Starts the server with these variables added to its environment. */
    void start(Map<String, String> env) throws Exception {
        CliProcess.throughServer(runtime);
        CliProcess starter = new CliProcess(runtime);
        env.forEach(starter::env);
        var start = starter.run("server", "start");
        assertThat(start.exitCode()).as(start.toString()).isZero();
        pid = Long.parseLong(field(PID, status()));
    }

    void stop() throws Exception {
        try {
            String status = status();
            assertThat(Long.parseLong(field(PID, status))).as("the same server served the whole suite").isEqualTo(pid);
            assertThat(Long.parseLong(field(SERVED, status))).as(status).isPositive();
            var stop = new CliProcess(runtime).run("server", "stop");
            assertThat(stop.exitCode()).as(stop.toString()).isZero();
        } finally {
            CliProcess.throughServer(null);
            ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        }
    }

    String status() throws Exception {
        var status = new CliProcess(runtime).run("server", "status");
        assertThat(status.exitCode()).as(status.toString()).isZero();
        return status.stdout();
    }

    static String field(Pattern pattern, String text) {
        Matcher matcher = pattern.matcher(text);
        assertThat(matcher.find()).as(text).isTrue();
        return matcher.group(1);
    }
}
