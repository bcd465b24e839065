package dev.execache.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The official TypeScript SDK client ({@code @modelcontextprotocol/sdk}, pinned, installed by the
 * build) driving {@code execache serve} through {@code serve-client.mjs}: node starts the packaged
 * server as agent hosts do. The script prints one JSON event per line and takes control lines.
 */
final class TypeScriptClient implements AutoCloseable {
    /** Reads results of any depth, as a JavaScript client does. */
    static final ObjectMapper JSON = JsonMapper.builder(JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(100_000).build()).build()).build();
    private static final Duration WAIT = Duration.ofMinutes(2);

    private final Process node;
    private final String marker = UUID.randomUUID().toString();
    private final LinkedBlockingQueue<JsonNode> events = new LinkedBlockingQueue<>();
    private final List<String> stderr = new CopyOnWriteArrayList<>();

    private TypeScriptClient(String scenario, Map<String, String> env, List<String> serveArguments) throws IOException {
        Path scripts = nodeModules().getParent();
        List<String> command = new ArrayList<>(List.of("node", scripts.resolve("serve-client.mjs").toString(), scenario,
                ServeProcess.java()));
        command.addAll(ServeProcess.command(marker, serveArguments));
        ProcessBuilder builder = new ProcessBuilder(command).directory(scripts.toFile());
        builder.environment().remove("EXECACHE_STORE");
        builder.environment().putAll(env);
        node = builder.start();
        Thread out = new Thread(() -> {
            try (BufferedReader lines = reader(node.getInputStream())) {
                String line;
                while ((line = lines.readLine()) != null) {
                    events.add(JSON.readTree(line));
                }
            } catch (IOException e) {
                // node is gone
            }
        }, "ts-client-out");
        out.setDaemon(true);
        out.start();
        Thread err = new Thread(() -> {
            try (BufferedReader lines = reader(node.getErrorStream())) {
                String line;
                while ((line = lines.readLine()) != null) {
                    stderr.add(line);
                }
            } catch (IOException e) {
                // node is gone
            }
        }, "ts-client-err");
        err.setDaemon(true);
        err.start();
    }

    static TypeScriptClient start(String scenario, Map<String, String> env, String... serveArguments) throws IOException {
        return new TypeScriptClient(scenario, env, List.of(serveArguments));
    }

    /**
     * Runs one of the tests' node scripts (beside node_modules) that prints its findings as one JSON
     * line, and reads that line.
     */
    static JsonNode runScript(String script, List<String> arguments, Map<String, String> env) throws Exception {
        Path scripts = nodeModules().getParent();
        List<String> command = new ArrayList<>(List.of("node", scripts.resolve(script).toString()));
        command.addAll(arguments);
        ProcessBuilder builder = new ProcessBuilder(command).directory(scripts.toFile())
                .redirectError(ProcessBuilder.Redirect.DISCARD);
        builder.environment().remove("EXECACHE_STORE");
        builder.environment().putAll(env);
        Process node = builder.start();
        String line;
        try (BufferedReader out = new BufferedReader(new InputStreamReader(node.getInputStream(), StandardCharsets.UTF_8))) {
            line = out.readLine();
        }
        node.waitFor(ServeProcess.REQUEST_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        if (line == null) {
            throw new AssertionError(script + " gave no answer");
        }
        return JSON.readTree(line);
    }

    static Path nodeModules() {
        String modules = System.getProperty("execache.testNodeModules");
        if (modules == null || !Files.isDirectory(Path.of(modules))) {
            throw new IllegalStateException("system property execache.testNodeModules must name the installed MCP peers");
        }
        return Path.of(modules);
    }

    private static BufferedReader reader(InputStream in) {
        return new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
    }

    /** The next event of this kind; events of other kinds before it are skipped. */
    JsonNode await(String event) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            JsonNode next = events.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
            if (next != null && event.equals(next.path("event").textValue())) {
                return next;
            }
        }
        throw new AssertionError("no '" + event + "' event from the TypeScript client; its stderr:\n"
                + String.join("\n", stderr));
    }

    /** Every event until the script ends. */
    List<JsonNode> all(String event) throws InterruptedException {
        awaitExit();
        List<JsonNode> matching = new ArrayList<>();
        for (JsonNode each : events) {
            if (event.equals(each.path("event").textValue())) {
                matching.add(each);
            }
        }
        return matching;
    }

    void send(String line) throws IOException {
        OutputStream in = node.getOutputStream();
        in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        in.flush();
    }

    /** The server process (node's child). */
    ProcessHandle server() {
        return node.toHandle().descendants()
                .filter(child -> child.info().arguments().map(args -> List.of(args).contains("-Dexecache.it=" + marker))
                        .orElse(false))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no execache serve under the TypeScript client"));
    }

    List<String> stderr() {
        return List.copyOf(stderr);
    }

    void awaitExit() throws InterruptedException {
        if (!node.waitFor(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError("the TypeScript client did not finish; its stderr:\n" + String.join("\n", stderr));
        }
    }

    @Override
    public void close() throws InterruptedException {
        try {
            node.getOutputStream().close();
        } catch (IOException e) {
            // already closed
        }
        if (!node.waitFor(30, TimeUnit.SECONDS)) {
            node.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
            node.destroyForcibly();
        }
    }
}
