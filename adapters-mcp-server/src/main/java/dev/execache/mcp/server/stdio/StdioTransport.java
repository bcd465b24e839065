package dev.execache.mcp.server.stdio;

import dev.execache.gateway.InFlightCalls;
import dev.execache.gateway.Json;
import dev.execache.gateway.ServeTools;
import dev.execache.mcp.server.protocol.JsonRpc;
import dev.execache.mcp.server.protocol.JsonText;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntFunction;

/**
 * MCP's stdio transport, the framing: newline-delimited JSON-RPC on a pair of streams. What a message asks is
 * {@link StdioDispatch}'s, the SDK's session is reached through {@link SdkSessionBridge}.
 *
 * <p>It stands in for the SDK's {@code StdioServerTransportProvider} (see
 * modelcontextprotocol/java-sdk #686), which stops reading at the first line it cannot parse
 * and, under concurrent tool calls, can drop a response when its outbound sink is contended
 * ("Failed to enqueue message"). Here a line that is not a JSON-RPC message gets a JSON-RPC
 * error and the session goes on; each message is written whole, under a lock, by the thread
 * that sends it. Requests are tracked until answered ({@link PendingRequests}), so that at the end of input the
 * session ends only once every request read has its answer (or {@code drainLimit} has passed):
 * {@code printf '...' | execache serve} gets its answers. Batches are taken when the negotiated version
 * (2025-03-26) has them, their answers gathered into one line. A tool call is answered by the thread that read it
 * until {@link ReadingWatchdog} hands reading on to another thread. No answer line is longer than
 * {@link ServeTools#MAX_ANSWER_BYTES}.
 */
final class StdioTransport {
    private static final System.Logger LOG = System.getLogger("dev.execache.mcp.server");
    private static final int MAX_LINE_BYTES = 16 * 1024 * 1024;
    private static final String BATCH_VERSION = "2025-03-26";

    /** What one message read asks: {@code batch} is the batch it came in, or null. */
    @FunctionalInterface
    interface Dispatcher {
        void dispatch(String line, JsonRpc.Message message, AnswerBatch batch);
    }

    private final LineReader lines;
    private final LineWriter out;
    private final Duration drainLimit;
    private final PendingRequests pending = new PendingRequests();
    private final Map<Object, AnswerBatch> batches = new ConcurrentHashMap<>();
    private final AtomicBoolean closing = new AtomicBoolean();
    private final CompletableFuture<Void> ended = new CompletableFuture<>();
    /** Answer the calls of batches, and take over reading from a thread busy with a long call. */
    private final ExecutorService workers = Executors.newCachedThreadPool(task -> {
        Thread thread = new Thread(task, "execache-mcp-stdio");
        thread.setDaemon(true);
        return thread;
    });
    /** A call the thread reading now is to answer itself; only that thread uses it. */
    private Runnable readersCall;
    private final ReadingWatchdog handOff = new ReadingWatchdog(workers, this::readAll,
            () -> ended.isDone() || closing.get());
    private volatile Dispatcher dispatcher;
    private volatile Runnable inputEnded = () -> { };
    /** The protocol version the session negotiated (batches are of one only); null before. */
    private volatile String protocolVersion;

    StdioTransport(InputStream in, OutputStream out, Duration drainLimit) {
        this.out = new LineWriter(out);
        this.lines = new LineReader(in, MAX_LINE_BYTES, () -> {
            String problem = "Invalid Request: a message longer than " + MAX_LINE_BYTES + " bytes";
            LOG.log(Level.WARNING, problem);
            this.out.writeOrNote(errorLine(null, McpSchema.ErrorCodes.INVALID_REQUEST, problem, null));
        });
        this.drainLimit = drainLimit;
    }

    /**
     * Starts reading: each message goes to {@code dispatcher}; {@code inputEnded} is told when input ends, before the
     * requests still being answered are waited for.
     */
    void start(Dispatcher dispatcher, Runnable inputEnded) {
        this.dispatcher = dispatcher;
        this.inputEnded = inputEnded;
        Thread reader = new Thread(this::readAll, "execache-mcp-stdin");
        reader.setDaemon(true);
        reader.start();
        handOff.start();
    }

    /** The requests read and not answered yet. */
    PendingRequests pending() {
        return pending;
    }

    /** Completes when input has ended and every request read was answered (or the drain limit passed). */
    CompletableFuture<Void> ended() {
        return ended;
    }

    /** Nothing more is read. */
    void stopReading() {
        closing.set(true);
    }

    boolean stopping() {
        return closing.get();
    }

    /** The protocol version the session negotiated: batches are taken in 2025-03-26. */
    void negotiated(String version) {
        this.protocolVersion = version;
    }

    /** Writes one message now; a failure is noted, not thrown. */
    void write(String line) {
        out.writeOrNote(line);
    }

    /** Writes one message now; a failure is thrown. */
    void writeOrFail(String line) throws IOException {
        out.write(line);
    }

    /** Writes the answer to request {@code id}, as part of its batch when it came in one. */
    void deliver(Object id, String line) {
        AnswerBatch batch = id == null ? null : batches.remove(InFlightCalls.key(id));
        if (batch != null) {
            batch.add(line);
        } else {
            out.writeOrNote(line);
        }
    }

    /** Request {@code id} has its answer (or will have none). */
    void answered(Object id) {
        pending.answered(InFlightCalls.key(id));
    }

    /** The request of {@code key} will have no answer: its batch does not wait for one. */
    void skipBatchOf(Object key) {
        AnswerBatch batch = batches.remove(key);
        if (batch != null) {
            batch.skip();
        }
    }

    /** The request of {@code key} was answered already: its batch forgets it. */
    void forgetBatchOf(Object key) {
        batches.remove(key);
    }

    /** {@code answer} is run by the thread that read the request, once it has read the line (see {@link #readAll}). */
    void answerAfterLine(Runnable answer) {
        readersCall = answer;
    }

    /** {@code answer} is run on a thread of its own. */
    void answerElsewhere(Runnable answer) {
        workers.execute(answer);
    }

    /**
     * Serve is stopping: every request still being computed gets an error that says so (not one that blames the
     * code), and nothing more is read.
     */
    void refuseUnanswered() {
        closing.set(true);
        for (Map.Entry<Object, String> request : pending.unanswered().entrySet()) {
            Object id = request.getKey();
            if (!pending.claim(id)) {
                continue;
            }
            if (McpSchema.METHOD_TOOLS_CALL.equals(request.getValue())) {
                deliver(id, resultLine(id, ServeTools.shuttingDown()));
            } else {
                deliver(id, errorLine(id, McpSchema.ErrorCodes.INTERNAL_ERROR, "the server is shutting down", null));
            }
        }
    }

    /**
     * Reads and dispatches lines until input ends. A tool call is answered by the thread that read
     * it, until {@link ReadingWatchdog} hands reading on to another thread.
     */
    private void readAll() {
        try {
            byte[] line;
            while (!closing.get() && (line = lines.readLine()) != null) {
                String text = new String(line, StandardCharsets.UTF_8).strip();
                if (!text.isEmpty() && !closing.get()) {
                    dispatch(text);
                }
                Runnable call = readersCall;
                if (call != null) {
                    readersCall = null;
                    if (!handOff.answerWhileReading(call)) {
                        // reading went on in another thread meanwhile
                        return;
                    }
                }
            }
        } catch (IOException e) {
            if (!closing.get()) {
                LOG.log(Level.WARNING, "reading standard input failed: " + e.getMessage());
            }
        }
        inputEnded.run();
        pending.awaitAnswers(drainLimit);
        ended.complete(null);
    }

    private void dispatch(String line) {
        JsonRpc.Message message = JsonRpc.parse(line, "line");
        if (message instanceof JsonRpc.Batch batch) {
            dispatchBatch(batch.items());
        } else {
            dispatcher.dispatch(line, message, null);
        }
    }

    private void dispatchBatch(ArrayNode items) {
        if (!BATCH_VERSION.equals(protocolVersion) || items.isEmpty()) {
            String problem = items.isEmpty() ? "Invalid Request: an empty batch"
                    : "Invalid Request: batches are part of protocol version " + BATCH_VERSION + " only, not "
                            + (protocolVersion == null ? "before initialize" : protocolVersion);
            LOG.log(Level.WARNING, problem);
            out.writeOrNote(JsonRpc.error(null, McpSchema.ErrorCodes.INVALID_REQUEST, problem, null));
            return;
        }
        List<JsonRpc.Message> messages = new ArrayList<>();
        AnswerBatch collected = new AnswerBatch(out::writeOrNote);
        for (JsonNode item : items) {
            JsonRpc.Message message = item instanceof ObjectNode ? JsonRpc.read(item)
                    : new JsonRpc.Invalid(null, null, McpSchema.ErrorCodes.INVALID_REQUEST,
                            "Invalid Request: a batch item must be an object", null, JsonRpc.Fault.MESSAGE, false);
            if (message instanceof JsonRpc.Request || message instanceof JsonRpc.Invalid) {
                collected.expect();
            }
            messages.add(message);
        }
        for (int i = 0; i < messages.size(); i++) {
            JsonRpc.Message message = messages.get(i);
            if (message instanceof JsonRpc.Request request) {
                batches.put(InFlightCalls.key(request.idValue()), collected);
            }
            dispatcher.dispatch(Json.write(items.get(i)), message, collected);
        }
    }

    static String errorLine(Object id, int code, String message, String data) {
        ObjectNode response = Json.MAPPER.createObjectNode();
        response.put("jsonrpc", McpSchema.JSONRPC_VERSION);
        response.set("id", Json.MAPPER.valueToTree(id));
        ObjectNode error = response.putObject("error");
        error.put("code", code);
        error.put("message", message);
        if (data != null) {
            error.put("data", data);
        }
        return Json.write(response);
    }

    static String resultLine(Object id, Object result) {
        ObjectNode response = Json.MAPPER.createObjectNode();
        response.put("jsonrpc", McpSchema.JSONRPC_VERSION);
        response.set("id", Json.MAPPER.valueToTree(id));
        response.set("result", Json.MAPPER.valueToTree(result));
        return Json.write(response);
    }

    /**
     * The answer line, or, when it is longer than {@link ServeTools#MAX_ANSWER_BYTES}, an error
     * instead: for a tool call the result {@code tooLarge} gives for its size.
     */
    static String withinLimit(String line, Object id, String method, IntFunction<String> tooLarge) {
        // a line of fewer characters than a sixth of the limit is within it, whatever they are
        int size = line.length() > ServeTools.MAX_ANSWER_BYTES / 6
                ? JsonText.escapeLoneSurrogates(line).getBytes(StandardCharsets.UTF_8).length : 0;
        if (size <= ServeTools.MAX_ANSWER_BYTES) {
            return line;
        }
        LOG.log(Level.WARNING, "an answer of " + size + " bytes is over the limit of "
                + ServeTools.MAX_ANSWER_BYTES + " bytes; sent an error instead");
        return McpSchema.METHOD_TOOLS_CALL.equals(method) ? tooLarge.apply(size)
                : errorLine(id, McpSchema.ErrorCodes.INTERNAL_ERROR, "the answer is " + size
                        + " bytes, over the limit of " + ServeTools.MAX_ANSWER_BYTES + " bytes", null);
    }
}
