package dev.execache.sandbox;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * Reads a runner's merged stdout and stderr: console output, with the runner's frames (see
 * runner.js) taken out. A frame counts only when it starts with the run's secret and ends with
 * it right after the announced number of bytes. Keeps at most the console bound in memory.
 */
final class FrameReader {
    /** Error frames carry a name, a message and a stack of at most 64 Ki characters each. */
    private static final int MAX_ERROR_FRAME_BYTES = 1024 * 1024;
    private static final int MAX_LENGTH_DIGITS = 12;

    enum Ending {
        /** a value or error frame arrived */
        FRAME,
        /** the console went past its bound */
        OUTPUT_LIMIT,
        /** a value frame announced more bytes than the result bound */
        RESULT_LIMIT,
        /** a frame started but did not end as announced */
        CORRUPT,
        /** the stream ended first */
        END_OF_STREAM
    }

    /** The kinds of frame; runner.js names them in its FRAME constant (a test checks they agree). */
    enum Kind {
        /** the runner took the request; the code is about to run */
        ACK('a'),
        /** the result as JSON text */
        VALUE('v'),
        /** an error as length-prefixed fields */
        ERROR('e'),
        /** the sources of non-determinism the code used, comma-separated; just before VALUE or ERROR */
        NONDETERMINISM('n'),
        /** a tool call: the server's and the tool's names as length-prefixed fields, then the arguments */
        CALL('c');

        final char code;

        Kind(char code) {
            this.code = code;
        }

        static Kind of(byte code) {
            for (Kind kind : values()) {
                if (kind.code == code) {
                    return kind;
                }
            }
            return null;
        }
    }

    /** The kinds of the host's answers to tool calls, on the runner's stdin; runner.js's ANSWER. */
    enum Answer {
        VALUE('v'),
        ERROR('e');

        final char code;

        Answer(char code) {
            this.code = code;
        }
    }

    /** Where CALL frames go, as they arrive; the run goes on while it answers. */
    @FunctionalInterface
    interface Calls {
        void call(byte[] payload) throws IOException;
    }

    /**
     * What one run's output held; kind is null unless a frame ended the run.
     *
     * @param nondeterminism the payload of the NONDETERMINISM frame, empty if none came
     */
    record Outcome(Ending ending, boolean acknowledged, Kind kind, byte[] payload, byte[] console,
            String nondeterminism) {
        Outcome(Ending ending, boolean acknowledged, Kind kind, byte[] payload, byte[] console) {
            this(ending, acknowledged, kind, payload, console, "");
        }
    }

    /**
     * The most bytes one CALL frame's payload may have. The runner is told it (maxCallBytes) and
     * rejects a bigger call itself, as an error its code can catch; a bigger frame that arrives
     * anyway ends the run as CORRUPT.
     */
    static long maxCallBytes(long maxResultBytes) {
        return Math.max(maxResultBytes, MAX_ERROR_FRAME_BYTES);
    }

    private final byte[] secret;
    private final int[] failure;
    private final long maxConsoleBytes;
    private final long maxResultBytes;
    private final ByteArrayOutputStream console = new ByteArrayOutputStream();
    private final Calls calls;
    private boolean acknowledged;
    private String nondeterminism = "";

    FrameReader(byte[] secret, long maxConsoleBytes, long maxResultBytes) {
        this(secret, maxConsoleBytes, maxResultBytes, null);
    }

    /** @param calls where tool calls go; null when the run has no tools (a CALL frame then ends it as CORRUPT) */
    FrameReader(byte[] secret, long maxConsoleBytes, long maxResultBytes, Calls calls) {
        this.calls = calls;
        this.secret = secret.clone();
        this.failure = failureFunction(this.secret);
        this.maxConsoleBytes = maxConsoleBytes;
        this.maxResultBytes = maxResultBytes;
    }

    Outcome read(InputStream in) throws IOException {
        byte[] buffer = new byte[8192];
        int matched = 0;
        int n;
        Frame frame = null;
        while ((n = in.read(buffer)) >= 0) {
            for (int i = 0; i < n; i++) {
                byte b = buffer[i];
                if (frame != null) {
                    Ending ending = frame.accept(b);
                    if (ending == null) {
                        continue;
                    }
                    if (ending != Ending.FRAME) {
                        return outcome(ending, frame);
                    }
                    if (frame.kind == Kind.ACK) {
                        acknowledged = true;
                        frame = null;
                        continue;
                    }
                    if (frame.kind == Kind.NONDETERMINISM) {
                        nondeterminism = new String(frame.payload, StandardCharsets.UTF_8);
                        frame = null;
                        continue;
                    }
                    if (frame.kind == Kind.CALL) {
                        if (calls == null) {
                            return outcome(Ending.CORRUPT, frame);
                        }
                        calls.call(frame.payload);
                        frame = null;
                        continue;
                    }
                    return outcome(Ending.FRAME, frame);
                }
                while (matched > 0 && b != secret[matched]) {
                    int keep = failure[matched - 1];
                    if (!console(secret, 0, matched - keep)) {
                        return outcome(Ending.OUTPUT_LIMIT, null);
                    }
                    matched = keep;
                }
                if (b == secret[matched]) {
                    matched++;
                    if (matched == secret.length) {
                        matched = 0;
                        frame = new Frame();
                    }
                } else if (!console(buffer, i, 1)) {
                    return outcome(Ending.OUTPUT_LIMIT, null);
                }
            }
        }
        if (frame != null) {
            return outcome(Ending.CORRUPT, frame);
        }
        if (!console(secret, 0, matched)) {
            return outcome(Ending.OUTPUT_LIMIT, null);
        }
        return outcome(Ending.END_OF_STREAM, null);
    }

    /** The console output read so far; safe from another thread while {@link #read} goes on. */
    byte[] consoleSoFar() {
        return console.toByteArray();
    }

    private boolean console(byte[] bytes, int offset, int length) {
        long room = maxConsoleBytes - console.size();
        if (length > room) {
            console.write(bytes, offset, (int) Math.max(0, room));
            return false;
        }
        console.write(bytes, offset, length);
        return true;
    }

    private Outcome outcome(Ending ending, Frame frame) {
        Kind kind = frame == null ? null : frame.kind;
        byte[] payload = frame == null || frame.payload == null ? new byte[0] : frame.payload;
        return new Outcome(ending, acknowledged, kind, payload, console.toByteArray(), nondeterminism);
    }

    /** The frame after its leading secret: kind, decimal length, newline, payload, secret. */
    private final class Frame {
        private Kind kind;
        private long length = -1;
        private int digits;
        private byte[] payload;
        private int filled;
        private int trailer;

        /** Null while the frame goes on, else how it ended. */
        Ending accept(byte b) {
            if (kind == null) {
                kind = Kind.of(b);
                if (kind == null) {
                    return Ending.CORRUPT;
                }
                length = 0;
                return null;
            }
            if (payload == null) {
                if (b == '\n' && digits > 0) {
                    if (kind == Kind.VALUE && length > maxResultBytes) {
                        return Ending.RESULT_LIMIT;
                    }
                    if ((kind == Kind.ACK && length != 0)
                            || ((kind == Kind.ERROR || kind == Kind.NONDETERMINISM) && length > MAX_ERROR_FRAME_BYTES)
                            || (kind == Kind.CALL && length > maxCallBytes(maxResultBytes))
                            || length > Integer.MAX_VALUE - 16) {
                        return Ending.CORRUPT;
                    }
                    payload = new byte[(int) length];
                    return null;
                }
                if (b < '0' || b > '9' || ++digits > MAX_LENGTH_DIGITS) {
                    return Ending.CORRUPT;
                }
                length = length * 10 + (b - '0');
                return null;
            }
            if (filled < payload.length) {
                payload[filled++] = b;
                return null;
            }
            if (b != secret[trailer]) {
                return Ending.CORRUPT;
            }
            return ++trailer == secret.length ? Ending.FRAME : null;
        }
    }

    private static int[] failureFunction(byte[] pattern) {
        int[] failure = new int[pattern.length];
        int k = 0;
        for (int i = 1; i < pattern.length; i++) {
            while (k > 0 && pattern[i] != pattern[k]) {
                k = failure[k - 1];
            }
            if (pattern[i] == pattern[k]) {
                k++;
            }
            failure[i] = k;
        }
        return failure;
    }
}
