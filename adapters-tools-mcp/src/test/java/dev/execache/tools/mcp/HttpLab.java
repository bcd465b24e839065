package dev.execache.tools.mcp;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The tests' own MCP server over Streamable HTTP (http-lab-server.mjs), started on loopback: a
 * 2025-era server on the official TypeScript SDK, or a 2026-07-28 one. Public, in this module's test-jar, for the
 * tests that reach url servers through serve and the gateway too.
 */
public final class HttpLab implements AutoCloseable {
    private final List<String> options;
    private Process process;
    private int port;

    private HttpLab(List<String> options) {
        this.options = List.copyOf(options);
    }

    /** Starts a server with these options of http-lab-server.mjs ({@code --era 2026}, {@code --token T}, ...). */
    public static HttpLab start(String... options) throws IOException {
        HttpLab lab = new HttpLab(List.of(options));
        lab.launch(0);
        return lab;
    }

    public URI url() {
        return URI.create((options.contains("--tls-cert") ? "https" : "http") + "://127.0.0.1:" + port + "/mcp");
    }

    /** Stops the server, as a crash or a deploy would. */
    public void stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
        }
    }

    /** Starts it again on the same port, with no sessions and its counters at zero. */
    public void startAgain() throws IOException {
        launch(port);
    }

    private void launch(int on) throws IOException {
        List<String> command = new ArrayList<>(List.of("node",
                nodeModules().resolveSibling("http-lab-server.mjs").toString(), "--port", Integer.toString(on)));
        command.addAll(options);
        process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        String line = out.readLine();
        if (line == null || !line.startsWith("listening ")) {
            throw new IOException("the HTTP lab server did not start: " + line);
        }
        port = Integer.parseInt(line.substring("listening ".length()).trim());
    }

    /** Where the build installed the lab's SDK (system property execache.testNodeModules); the server is beside it. */
    private static Path nodeModules() {
        String property = System.getProperty("execache.testNodeModules");
        if (property == null || !Files.isDirectory(Path.of(property))) {
            throw new IllegalStateException("the build installs the MCP test peers and names them in the system"
                    + " property execache.testNodeModules; it is " + property);
        }
        return Path.of(property);
    }

    @Override
    public void close() throws InterruptedException {
        if (process != null) {
            stop();
        }
    }
}
