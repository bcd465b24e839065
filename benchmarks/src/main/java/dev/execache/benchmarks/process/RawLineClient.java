package dev.execache.benchmarks.process;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The least an MCP client can do over stdio: write one JSON-RPC line, read lines until the
 * answer with its id. Measured beside the SDK client, it splits a round trip into what the
 * client's own stack costs and what the server (and the pipe) cost.
 */
public final class RawLineClient implements AutoCloseable {
    private final Process process;
    private final OutputStream in;
    private final BufferedReader out;
    private int nextId = 1;

    public RawLineClient(List<String> command) throws IOException {
        process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        in = process.getOutputStream();
        out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        request("initialize", "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                + "\"clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}");
        send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    }

    public static RawLineClient of(String command, List<String> args) throws IOException {
        List<String> all = new ArrayList<>();
        all.add(command);
        all.addAll(args);
        return new RawLineClient(all);
    }

    /** The server's process id. */
    public long pid() {
        return process.pid();
    }

    /** Calls a tool with arguments given as JSON text; returns the round trip in nanoseconds. */
    public long call(String tool, String argumentsJson) throws IOException {
        long start = System.nanoTime();
        String answer = callTool(tool, argumentsJson);
        long took = System.nanoTime() - start;
        succeeded(tool, answer);
        return took;
    }

    /** Calls a tool with arguments given as JSON text; returns the answer line. */
    public String answer(String tool, String argumentsJson) throws IOException {
        return succeeded(tool, callTool(tool, argumentsJson));
    }

    private String callTool(String tool, String argumentsJson) throws IOException {
        return request("tools/call", "{\"name\":\"" + tool + "\",\"arguments\":" + argumentsJson + "}");
    }

    /** The answer, unless it is an error (which ends the benchmark). */
    private static String succeeded(String tool, String answer) {
        if (answer.contains("\"isError\":true") || answer.contains("\"error\":{")) {
            throw new IllegalStateException(tool + " failed: " + answer);
        }
        return answer;
    }

    private String request(String method, String params) throws IOException {
        int id = nextId++;
        send("{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"" + method + "\",\"params\":" + params + "}");
        String marker = "\"id\":" + id + ",";
        String end = "\"id\":" + id + "}";
        String line;
        while ((line = out.readLine()) != null) {
            if (line.contains(marker) || line.endsWith(end)) {
                return line;
            }
        }
        throw new IOException("the server ended before answering " + method);
    }

    private void send(String line) throws IOException {
        in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        in.flush();
    }

    @Override
    public void close() {
        try {
            in.close();
        } catch (IOException e) {
            // it ended already
        }
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
