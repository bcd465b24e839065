package dev.execache.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code java -jar execache.jar serve --http ...} as a separate process: the packaged jar
 * (system property {@code execache.jar}), its URL read from the line it logs once it listens.
 */
final class HttpServeProcess implements AutoCloseable {
    private static final Pattern SERVING = Pattern.compile("serving MCP on (http://\\S+/mcp)");

    private final Process process;
    private final List<String> stderr = new CopyOnWriteArrayList<>();
    private final CompletableFuture<String> url = new CompletableFuture<>();

    private HttpServeProcess(Map<String, String> env, List<String> arguments) throws IOException {
        List<String> command = new ArrayList<>(List.of(ServeProcess.java()));
        command.addAll(ServeProcess.command(UUID.randomUUID().toString(), arguments));
        ProcessBuilder builder = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.PIPE);
        builder.environment().remove("EXECACHE_STORE");
        builder.environment().remove("EXECACHE_HTTP_TOKEN");
        // a developer's own OpenTelemetry settings never reach the tests' servers
        builder.environment().keySet().removeIf(name -> name.startsWith("OTEL_"));
        builder.environment().putAll(env);
        process = builder.start();
        Thread reader = new Thread(() -> {
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(process.getErrorStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = lines.readLine()) != null) {
                    stderr.add(line);
                    Matcher serving = SERVING.matcher(line);
                    if (serving.find()) {
                        url.complete(serving.group(1));
                    }
                }
            } catch (IOException e) {
                // the process is gone
            }
            url.completeExceptionally(new IllegalStateException("serve --http ended before it listened; stderr:\n"
                    + String.join("\n", stderr)));
        }, "http-serve-stderr");
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts the server and waits until it listens. */
    static HttpServeProcess start(Map<String, String> env, String... arguments) throws Exception {
        HttpServeProcess server = new HttpServeProcess(env, List.of(arguments));
        server.url.get(ServeProcess.REQUEST_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        return server;
    }

    /** Starts a process that is expected to end at once (a refused setting); returns it ended. */
    static HttpServeProcess run(Map<String, String> env, String... arguments) throws Exception {
        HttpServeProcess server = new HttpServeProcess(env, List.of(arguments));
        if (!server.process.waitFor(ServeProcess.REQUEST_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
            server.process.destroyForcibly();
            throw new AssertionError("serve did not end; stderr:\n" + String.join("\n", server.stderr));
        }
        server.process.getErrorStream().close();
        return server;
    }

    String url() {
        return url.join();
    }

    int port() {
        String text = url();
        return Integer.parseInt(text.substring(text.lastIndexOf(':') + 1, text.indexOf("/mcp")));
    }

    ProcessHandle handle() {
        return process.toHandle();
    }

    int exitCode() {
        return process.exitValue();
    }

    List<String> stderr() {
        return List.copyOf(stderr);
    }

    /** Sends SIGTERM and waits for the process to end; returns its exit code. */
    int terminate(Duration limit) throws InterruptedException {
        process.destroy();
        if (!process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("serve did not end within " + limit + " of SIGTERM");
        }
        return process.exitValue();
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            process.destroy();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }
}
