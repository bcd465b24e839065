package dev.execache.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The tests' own MCP server over Streamable HTTP (http-lab-server.mjs), started on loopback: a
 * 2025-era server on the official TypeScript SDK, or a 2026-07-28 one.
 */
final class HttpLab implements AutoCloseable {
    private final List<String> options;
    private Process process;
    private int port;

    private HttpLab(List<String> options) {
        this.options = List.copyOf(options);
    }

    /** Starts a server with these options of http-lab-server.mjs ({@code --era 2026}, {@code --token T}, ...). */
    static HttpLab start(String... options) throws IOException {
        HttpLab lab = new HttpLab(List.of(options));
        lab.launch(0);
        return lab;
    }

    URI url() {
        return URI.create((options.contains("--tls-cert") ? "https" : "http") + "://127.0.0.1:" + port + "/mcp");
    }

    /** Stops the server, as a crash or a deploy would. */
    void stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
        }
    }

    /** Starts it again on the same port, with no sessions and its counters at zero. */
    void startAgain() throws IOException {
        launch(port);
    }

    private void launch(int on) throws IOException {
        List<String> command = new ArrayList<>(List.of("node",
                Downstream.nodeModules().resolveSibling("http-lab-server.mjs").toString(), "--port", Integer.toString(on)));
        command.addAll(options);
        process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        String line = out.readLine();
        if (line == null || !line.startsWith("listening ")) {
            throw new IOException("the HTTP lab server did not start: " + line);
        }
        port = Integer.parseInt(line.substring("listening ".length()).trim());
    }

    @Override
    public void close() throws InterruptedException {
        if (process != null) {
            stop();
        }
    }
}
