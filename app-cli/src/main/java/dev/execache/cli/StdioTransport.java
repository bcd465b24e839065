package dev.execache.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpServerSession;
import io.modelcontextprotocol.spec.McpServerTransport;
import io.modelcontextprotocol.spec.McpServerTransportProvider;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import reactor.core.publisher.Mono;

/**
 * MCP's stdio transport: newline-delimited JSON-RPC on a pair of streams, one session.
 *
 * <p>It stands in for the SDK's {@code StdioServerTransportProvider}, which stops reading at the
 * first line it cannot parse and, under concurrent tool calls, can drop a response when its
 * outbound sink is contended ("Failed to enqueue message"). Here a line that is not a JSON-RPC
 * message gets a JSON-RPC error and the session goes on; each message is written whole, under
 * a lock, by the thread that sends it. Requests are tracked until answered, so that at the
 * end of input the session ends only once every request read has its answer (or
 * {@code drainLimit} has passed): {@code printf '...' | execache serve} gets its answers.
 */
final class StdioTransport implements McpServerTransportProvider {
    private static final System.Logger LOG = System.getLogger("dev.execache.cli");
    private static final int MAX_LINE_BYTES = 16 * 1024 * 1024;

    private final InputStream in;
    private final OutputStream out;
    private final McpJsonMapper mapper;
    private final Duration drainLimit;
    private final Set<Object> unanswered = ConcurrentHashMap.newKeySet();
    private final Object answers = new Object();
    private final AtomicBoolean closing = new AtomicBoolean();
    private final CompletableFuture<Void> ended = new CompletableFuture<>();
    private volatile McpServerSession session;

    StdioTransport(InputStream in, OutputStream out, McpJsonMapper mapper, Duration drainLimit) {
        this.in = new BufferedInputStream(in, 64 * 1024);
        this.out = out;
        this.mapper = mapper;
        this.drainLimit = drainLimit;
    }

    /** Completes when input has ended and every request read was answered (or the drain limit passed). */
    CompletableFuture<Void> ended() {
        return ended;
    }

    @Override
    public void setSessionFactory(McpServerSession.Factory sessionFactory) {
        session = sessionFactory.create(new SessionTransport());
        Thread reader = new Thread(this::readAll, "execache-mcp-stdin");
        reader.setDaemon(true);
        reader.start();
    }

    @Override
    public Mono<Void> notifyClients(String method, Object params) {
        McpServerSession current = session;
        return current == null ? Mono.empty() : current.sendNotification(method, params);
    }

    @Override
    public Mono<Void> closeGracefully() {
        return Mono.defer(() -> {
            closing.set(true);
            McpServerSession current = session;
            return current == null ? Mono.empty() : current.closeGracefully();
        });
    }

    private void readAll() {
        try {
            byte[] line;
            while (!closing.get() && (line = readLine()) != null) {
                String text = new String(line, StandardCharsets.UTF_8).strip();
                if (!text.isEmpty()) {
                    dispatch(text);
                }
            }
        } catch (IOException e) {
            if (!closing.get()) {
                LOG.log(Level.WARNING, "reading standard input failed: " + e.getMessage());
            }
        }
        awaitAnswers();
        ended.complete(null);
    }

    private void dispatch(String line) {
        McpSchema.JSONRPCMessage message;
        try {
            message = McpSchema.deserializeJsonRpcMessage(mapper, line);
        } catch (Exception e) {
            reject(line, e);
            return;
        }
        if (message instanceof McpSchema.JSONRPCRequest request) {
            unanswered.add(idKey(request.id()));
        }
        session.handle(message).subscribe(null,
                error -> LOG.log(Level.WARNING, "handling a message failed: " + error));
    }

    /** Reads one line, without its terminator; null at the end of input. Overlong lines are answered and skipped. */
    private byte[] readLine() throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        boolean tooLong = false;
        int b;
        while ((b = in.read()) != -1 && b != '\n') {
            if (line.size() < MAX_LINE_BYTES) {
                line.write(b);
            } else {
                tooLong = true;
            }
        }
        if (b == -1 && line.size() == 0) {
            return null;
        }
        if (tooLong) {
            String problem = "Invalid Request: a message longer than " + MAX_LINE_BYTES + " bytes";
            LOG.log(Level.WARNING, problem);
            writeError(null, McpSchema.ErrorCodes.INVALID_REQUEST, problem, null);
            return new byte[0];
        }
        return line.toByteArray();
    }

    private void reject(String line, Exception problem) {
        JsonNode tree;
        try {
            tree = Output.JSON.readTree(line);
        } catch (IOException e) {
            tree = null;
        }
        Object id = null;
        if (tree instanceof ObjectNode object && (object.path("id").isTextual() || object.path("id").isIntegralNumber())) {
            id = object.get("id").isTextual() ? object.get("id").textValue() : object.get("id").numberValue();
        }
        int code = tree == null ? McpSchema.ErrorCodes.PARSE_ERROR : McpSchema.ErrorCodes.INVALID_REQUEST;
        String message = tree == null ? "Parse error: the line is not JSON"
                : "Invalid Request: not a JSON-RPC 2.0 request, notification or response";
        LOG.log(Level.WARNING, message + " (" + (line.length() <= 80 ? line : line.substring(0, 77) + "...") + ")");
        String detail = problem.getMessage() == null ? problem.getClass().getSimpleName() : problem.getMessage().lines().findFirst().orElse("");
        writeError(id, code, message, detail);
    }

    private void writeError(Object id, int code, String message, String data) {
        ObjectNode response = Output.JSON.createObjectNode();
        response.put("jsonrpc", McpSchema.JSONRPC_VERSION);
        response.set("id", Output.JSON.valueToTree(id));
        ObjectNode error = response.putObject("error");
        error.put("code", code);
        error.put("message", message);
        if (data != null) {
            error.put("data", data);
        }
        try {
            writeLine(Output.write(response));
        } catch (IOException e) {
            LOG.log(Level.DEBUG, "cannot write to standard output: " + e);
        }
    }

    private void writeLine(String json) throws IOException {
        byte[] bytes = (json.replace("\r\n", "\\n").replace("\n", "\\n").replace("\r", "\\n") + "\n")
                .getBytes(StandardCharsets.UTF_8);
        synchronized (out) {
            out.write(bytes);
            out.flush();
        }
    }

    private void answered(Object id) {
        if (unanswered.remove(idKey(id))) {
            synchronized (answers) {
                answers.notifyAll();
            }
        }
    }

    private void awaitAnswers() {
        long deadline = System.nanoTime() + drainLimit.toNanos();
        synchronized (answers) {
            while (!unanswered.isEmpty() && System.nanoTime() < deadline) {
                try {
                    answers.wait(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
        if (!unanswered.isEmpty()) {
            LOG.log(Level.WARNING, "input ended; gave up waiting for " + unanswered.size() + " unanswered requests");
        }
    }

    /** JSON-RPC ids are strings or integers; 1 and 1L are the same id. */
    private static Object idKey(Object id) {
        return id instanceof Number number ? (Object) number.longValue() : id;
    }

    private final class SessionTransport implements McpServerTransport {
        @Override
        public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
            return Mono.fromRunnable(() -> {
                try {
                    writeLine(mapper.writeValueAsString(message));
                } catch (IOException e) {
                    throw new IllegalStateException("cannot write to standard output: " + e.getMessage(), e);
                } finally {
                    if (message instanceof McpSchema.JSONRPCResponse response) {
                        answered(response.id());
                    }
                }
            });
        }

        @Override
        public <T> T unmarshalFrom(Object data, TypeRef<T> typeRef) {
            return mapper.convertValue(data, typeRef);
        }

        @Override
        public Mono<Void> closeGracefully() {
            return Mono.fromRunnable(() -> closing.set(true));
        }
    }
}
