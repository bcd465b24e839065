package dev.execache.mcp.server;

import dev.execache.gateway.Json;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * Speaks newline-delimited JSON-RPC to a server by hand, so that a test can also send what
 * no well-behaved client would.
 */
public final class RawMcpClient implements AutoCloseable {
    private static final Duration WAIT = Duration.ofSeconds(20);

    private final OutputStream toServer;
    private final LinkedBlockingQueue<JsonNode> received = new LinkedBlockingQueue<>();
    private final List<JsonNode> unclaimed = new ArrayList<>();
    private final AtomicInteger ids = new AtomicInteger();
    private final Thread reader;

    public RawMcpClient(OutputStream toServer, InputStream fromServer) {
        this.toServer = toServer;
        this.reader = new Thread(() -> read(fromServer), "raw-mcp-client");
        reader.setDaemon(true);
        reader.start();
    }

    private void read(InputStream fromServer) {
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(fromServer, StandardCharsets.UTF_8))) {
            String line;
            while ((line = lines.readLine()) != null) {
                received.add(Json.MAPPER.readTree(line));
            }
        } catch (IOException e) {
            // the server is gone; waiting callers time out
        }
    }

    public void send(String line) {
        try {
            toServer.write((line + "\n").getBytes(StandardCharsets.UTF_8));
            toServer.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Sends a request and returns its id. */
    public int sendRequest(String method, Object params) {
        int id = ids.incrementAndGet();
        ObjectNode request = Json.MAPPER.createObjectNode();
        request.put("jsonrpc", "2.0");
        request.put("id", id);
        request.put("method", method);
        if (params != null) {
            request.set("params", Json.MAPPER.valueToTree(params));
        }
        send(Json.write(request));
        return id;
    }

    public JsonNode request(String method, Object params) {
        return response(sendRequest(method, params));
    }

    /** Sends initialize and notifications/initialized; returns the initialize result. */
    public JsonNode initialize() {
        JsonNode result = request("initialize", Map.of("protocolVersion", "2025-11-25",
                "capabilities", Map.of(), "clientInfo", Map.of("name", "raw", "version", "1")));
        send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
        return result.get("result");
    }

    public JsonNode callTool(String name, Object arguments) {
        return request("tools/call", Map.of("name", name, "arguments", arguments)).get("result");
    }

    /** The response with this id; other messages wait for their turn. */
    public JsonNode response(Object id) {
        JsonNode wanted = Json.MAPPER.valueToTree(id);
        return next(message -> wanted.equals(message.get("id")), "a response with id " + id);
    }

    /** The answer to a batch: an array of responses. */
    public JsonNode batchResponse() {
        return next(JsonNode::isArray, "a batch response");
    }

    /** The next message that {@code matches}; other messages wait for their turn. */
    public JsonNode next(Predicate<JsonNode> matches, String what) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        synchronized (unclaimed) {
            for (JsonNode message : unclaimed) {
                if (matches.test(message)) {
                    unclaimed.remove(message);
                    return message;
                }
            }
        }
        while (System.nanoTime() < deadline) {
            JsonNode message;
            try {
                message = received.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
            if (message == null) {
                break;
            }
            if (matches.test(message)) {
                return message;
            }
            synchronized (unclaimed) {
                unclaimed.add(message);
            }
        }
        throw new AssertionError("no " + what + " within " + WAIT);
    }

    /** Messages received that no {@link #response} call has asked for. */
    public List<JsonNode> unclaimed() {
        List<JsonNode> all = new ArrayList<>();
        received.drainTo(all);
        synchronized (unclaimed) {
            unclaimed.addAll(all);
            return List.copyOf(unclaimed);
        }
    }

    /** Closes the server's input: the end of the conversation. */
    @Override
    public void close() {
        try {
            toServer.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
