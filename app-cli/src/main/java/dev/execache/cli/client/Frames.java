package dev.execache.cli.client;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The one definition of what the thin client and the resident server say to each other: frames
 * of a kind, a length and bytes, on a Unix domain socket.
 */
public final class Frames {
    /** The line of the server's status that names its build, which a client compares with its own. */
    public static final String BUILD_LINE = "build   ";

    /** Frames bigger than this are refused: nothing either side sends comes near it. */
    static final int MAX_FRAME = 64 * 1024 * 1024;

    /** The kinds of frame. The client opens with RUN, STATUS or STOP; everything else follows. */
    public enum Kind {
        RUN('R'), STATUS('S'), STOP('Q'), STDIN('I'), STDIN_END('E'), CANCEL('C'),
        STDOUT('o'), STDERR('e'), EXIT('x'), READ_STDIN('i'), OTHER_BUILD('b');

        private final byte code;

        Kind(char code) {
            this.code = (byte) code;
        }

        static Kind of(byte code) throws IOException {
            for (Kind kind : values()) {
                if (kind.code == code) {
                    return kind;
                }
            }
            throw new IOException("unknown frame kind " + code);
        }
    }

    public record Frame(Kind kind, byte[] payload) {
        public int exitCode() {
            return ByteBuffer.wrap(payload).getInt();
        }

        public String text() {
            return new String(payload, StandardCharsets.UTF_8);
        }
    }

    /** What a client asks the server to run: exactly what an in-process run would be given. */
    public record Request(String build, List<String> args, String workingDir, Map<String, String> env, boolean terminal) {
        public byte[] encode() {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            try (DataOutputStream out = new DataOutputStream(bytes)) {
                writeString(out, build);
                writeString(out, workingDir);
                out.writeBoolean(terminal);
                out.writeInt(args.size());
                for (String arg : args) {
                    writeString(out, arg);
                }
                out.writeInt(env.size());
                for (var variable : env.entrySet()) {
                    writeString(out, variable.getKey());
                    writeString(out, variable.getValue());
                }
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            return bytes.toByteArray();
        }

        public static Request decode(byte[] payload) throws IOException {
            DataInputStream in = new DataInputStream(new ByteArrayInputStream(payload));
            String build = readString(in);
            String workingDir = readString(in);
            boolean terminal = in.readBoolean();
            int argCount = in.readInt();
            List<String> args = new ArrayList<>();
            for (int i = 0; i < argCount; i++) {
                args.add(readString(in));
            }
            int envCount = in.readInt();
            Map<String, String> env = new LinkedHashMap<>();
            for (int i = 0; i < envCount; i++) {
                env.put(readString(in), readString(in));
            }
            return new Request(build, args, workingDir, env, terminal);
        }
    }

    private Frames() {
    }

    /** Writes one frame; callers that share a stream between threads hold its lock. */
    public static void write(OutputStream out, Kind kind, byte[] payload, int offset, int length) throws IOException {
        out.write(ByteBuffer.allocate(5 + length).put(kind.code).putInt(length).put(payload, offset, length).array());
        out.flush();
    }

    public static void write(OutputStream out, Kind kind, byte[] payload) throws IOException {
        write(out, kind, payload, 0, payload.length);
    }

    public static void writeExit(OutputStream out, int code) throws IOException {
        write(out, Kind.EXIT, ByteBuffer.allocate(4).putInt(code).array());
    }

    /** The next frame, or null at the end of the stream. */
    public static Frame read(InputStream in) throws IOException {
        int kind = in.read();
        if (kind < 0) {
            return null;
        }
        DataInputStream data = new DataInputStream(in);
        int length = data.readInt();
        if (length < 0 || length > MAX_FRAME) {
            throw new IOException("frame of " + length + " bytes");
        }
        byte[] payload = new byte[length];
        data.readFully(payload);
        return new Frame(Kind.of((byte) kind), payload);
    }

    private static void writeString(DataOutputStream out, String text) throws IOException {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        out.writeInt(bytes.length);
        out.write(bytes);
    }

    private static String readString(DataInputStream in) throws IOException {
        int length = in.readInt();
        if (length < 0 || length > MAX_FRAME) {
            throw new EOFException("string of " + length + " bytes");
        }
        byte[] bytes = new byte[length];
        in.readFully(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /**
     * Streams over a socket channel that a reader and a writer can use at once. The JDK 17
     * streams from {@code Channels} hold the channel's blocking lock while blocked in a read,
     * so a writer on another thread would wait for the reader.
     */
    public static InputStream input(SocketChannel channel) {
        return new InputStream() {
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
                return channel.read(ByteBuffer.wrap(buffer, offset, length));
            }
        };
    }

    public static OutputStream output(SocketChannel channel) {
        return new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] buffer, int offset, int length) throws IOException {
                ByteBuffer bytes = ByteBuffer.wrap(buffer, offset, length);
                while (bytes.hasRemaining()) {
                    channel.write(bytes);
                }
            }
        };
    }
}
