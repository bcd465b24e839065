package dev.execache.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The server's standard input and output as the MCP transport sees them.
 *
 * <p>The SDK's stdio transport stops reading at the first line it cannot parse; here such a
 * line gets a JSON-RPC error (parse error or invalid request) and the transport never sees
 * it, so the server keeps serving. Requests are tracked until their response is written, so
 * that at the end of input the transport is told only once every request has been answered
 * (or {@code drainLimit} has passed): {@code printf '...' | execache serve} gets its answers.
 */
final class ProtocolStreams {
    private static final System.Logger LOG = System.getLogger("dev.execache.cli");
    private static final int MAX_LINE_BYTES = 16 * 1024 * 1024;
    /** Responses start {"jsonrpc":"2.0","id":...: their id is within the first bytes. */
    private static final int ID_PREFIX_BYTES = 1024;
    private static final JsonFactory JSON = new JsonFactory();

    private final McpJsonMapper mapper;
    private final Duration drainLimit;
    private final CheckedInput input;
    private final AnswerTracker output;
    private final Set<String> pending = ConcurrentHashMap.newKeySet();
    private final Object answers = new Object();
    private final CompletableFuture<Void> ended = new CompletableFuture<>();

    ProtocolStreams(InputStream in, OutputStream out, McpJsonMapper mapper, Duration drainLimit) {
        this.mapper = mapper;
        this.drainLimit = drainLimit;
        this.output = new AnswerTracker(out);
        this.input = new CheckedInput(new BufferedInputStream(in, 64 * 1024));
    }

    /** What the transport reads: only well-formed JSON-RPC messages, one a line. */
    InputStream input() {
        return input;
    }

    /** What the transport writes to; it synchronizes on this stream for each message. */
    OutputStream output() {
        return output;
    }

    /** Completes when input has ended and the transport has been told. */
    CompletableFuture<Void> ended() {
        return ended;
    }

    private void check(String line) {
        McpSchema.JSONRPCMessage message;
        try {
            message = McpSchema.deserializeJsonRpcMessage(mapper, line);
        } catch (Exception e) {
            rejectUnreadable(line, e);
            return;
        }
        if (message instanceof McpSchema.JSONRPCRequest request) {
            pending.add(idKey(request.id()));
        }
        input.pass(line);
    }

    private void rejectUnreadable(String line, Exception problem) {
        Object id = null;
        boolean json;
        try {
            var tree = Output.JSON.readTree(line);
            json = true;
            if (tree instanceof ObjectNode object && (object.path("id").isTextual() || object.path("id").isIntegralNumber())) {
                id = object.get("id").isTextual() ? object.get("id").textValue() : object.get("id").numberValue();
            }
        } catch (IOException e) {
            json = false;
        }
        int code = json ? McpSchema.ErrorCodes.INVALID_REQUEST : McpSchema.ErrorCodes.PARSE_ERROR;
        String message = json ? "Invalid Request: not a JSON-RPC 2.0 request, notification or response"
                : "Parse error: the line is not JSON";
        LOG.log(Level.WARNING, message + " (" + shorten(line) + ")");
        writeError(id, code, message, detail(problem));
    }

    private void rejectTooLong() {
        String message = "Invalid Request: a message longer than " + MAX_LINE_BYTES + " bytes";
        LOG.log(Level.WARNING, message);
        writeError(null, McpSchema.ErrorCodes.INVALID_REQUEST, message, null);
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
        byte[] bytes = (Output.write(response) + "\n").getBytes(StandardCharsets.UTF_8);
        synchronized (output) {
            try {
                output.write(bytes);
                output.flush();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    private void awaitAnswers() {
        long deadline = System.nanoTime() + drainLimit.toNanos();
        synchronized (answers) {
            while (!pending.isEmpty() && System.nanoTime() < deadline) {
                try {
                    answers.wait(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
        if (!pending.isEmpty()) {
            LOG.log(Level.WARNING, "input ended; gave up waiting for " + pending.size() + " unanswered requests");
        }
    }

    private void answered(byte[] line, int length) {
        if (pending.isEmpty()) {
            return;
        }
        String id = responseId(line, Math.min(length, ID_PREFIX_BYTES));
        if (id != null && pending.remove(id)) {
            synchronized (answers) {
                answers.notifyAll();
            }
        }
    }

    /** The id of a response, read from the start of its line; null for requests, notifications or no id. */
    static String responseId(byte[] line, int length) {
        try (JsonParser parser = JSON.createParser(line, 0, length)) {
            if (parser.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            while (parser.nextToken() == JsonToken.FIELD_NAME) {
                String field = parser.currentName();
                JsonToken value = parser.nextToken();
                if (field.equals("method")) {
                    return null;
                }
                if (field.equals("id")) {
                    return switch (value) {
                        case VALUE_NUMBER_INT -> idKey(parser.getLongValue());
                        case VALUE_STRING -> idKey(parser.getText());
                        default -> null;
                    };
                }
                if (value.isStructStart()) {
                    return null;
                }
            }
            return null;
        } catch (IOException e) {
            return null;
        }
    }

    static String idKey(Object id) {
        return id instanceof Number number ? "n:" + number.longValue() : "s:" + id;
    }

    private static String detail(Exception problem) {
        String text = problem.getMessage();
        if (text == null) {
            return problem.getClass().getSimpleName();
        }
        int newline = text.indexOf('\n');
        return newline < 0 ? text : text.substring(0, newline);
    }

    private static String shorten(String line) {
        return line.length() <= 80 ? line : line.substring(0, 77) + "...";
    }

    /** Hands the transport one checked line at a time; answers the others itself. */
    private final class CheckedInput extends InputStream {
        private final InputStream source;
        private byte[] current = new byte[0];
        private int position;
        private boolean finished;

        CheckedInput(InputStream source) {
            this.source = source;
        }

        void pass(String line) {
            current = (line + "\n").getBytes(StandardCharsets.UTF_8);
            position = 0;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] buffer, int offset, int length) throws IOException {
            if (length == 0) {
                return 0;
            }
            while (position >= current.length) {
                if (finished || !nextLine()) {
                    return -1;
                }
            }
            int n = Math.min(length, current.length - position);
            System.arraycopy(current, position, buffer, offset, n);
            position += n;
            return n;
        }

        /** Reads lines until one passes; false at the end of input. */
        private boolean nextLine() throws IOException {
            ByteArrayOutputStream line = new ByteArrayOutputStream();
            boolean tooLong = false;
            int b;
            while ((b = source.read()) != -1 && b != '\n') {
                if (line.size() < MAX_LINE_BYTES) {
                    line.write(b);
                } else {
                    tooLong = true;
                }
            }
            if (b == -1 && line.size() == 0) {
                finished = true;
                awaitAnswers();
                ended.complete(null);
                return false;
            }
            if (tooLong) {
                rejectTooLong();
                return true;
            }
            String text = line.toString(StandardCharsets.UTF_8).strip();
            if (!text.isEmpty()) {
                check(text);
            }
            return true;
        }
    }

    /** Passes every byte through and notes which requests have been answered. */
    private final class AnswerTracker extends OutputStream {
        private final OutputStream target;
        private final byte[] prefix = new byte[ID_PREFIX_BYTES];
        private int prefixLength;

        AnswerTracker(OutputStream target) {
            this.target = target;
        }

        @Override
        public void write(int b) throws IOException {
            target.write(b);
            note(b);
        }

        @Override
        public void write(byte[] bytes, int offset, int length) throws IOException {
            target.write(bytes, offset, length);
            for (int i = offset; i < offset + length; i++) {
                note(bytes[i]);
            }
        }

        private void note(int b) {
            if (b == '\n') {
                answered(prefix, prefixLength);
                prefixLength = 0;
            } else if (prefixLength < prefix.length) {
                prefix[prefixLength++] = (byte) b;
            }
        }

        @Override
        public void flush() throws IOException {
            target.flush();
        }

        @Override
        public void close() throws IOException {
            target.close();
        }
    }
}
