package dev.execache.store.redis;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * One Redis command on a connection of its own, for setting servers up in tests (CLUSTER
 * ADDSLOTS, CLUSTER MEET, INFO): no client library involved, so nothing it does (topology
 * discovery, retries) gets in the way of the setup. Replies: String, Long, List, or
 * {@link IOException} for an error reply.
 */
final class Resp {
    static Object call(int port, String... args) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            StringBuilder command = new StringBuilder("*").append(args.length).append("\r\n");
            for (String arg : args) {
                byte[] bytes = arg.getBytes(StandardCharsets.UTF_8);
                command.append('$').append(bytes.length).append("\r\n").append(arg).append("\r\n");
            }
            out.write(command.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
            return read(new BufferedInputStream(socket.getInputStream()));
        }
    }

    static String text(int port, String... args) throws IOException {
        return String.valueOf(call(port, args));
    }

    private static Object read(InputStream in) throws IOException {
        int type = in.read();
        String line = line(in);
        return switch (type) {
            case '+' -> line;
            case '-' -> throw new IOException("Redis answered: " + line);
            case ':' -> Long.parseLong(line);
            case '$' -> {
                int length = Integer.parseInt(line);
                if (length < 0) {
                    yield null;
                }
                byte[] bytes = in.readNBytes(length);
                line(in);
                yield new String(bytes, StandardCharsets.UTF_8);
            }
            case '*' -> {
                int count = Integer.parseInt(line);
                List<Object> items = new ArrayList<>();
                for (int i = 0; i < count; i++) {
                    items.add(read(in));
                }
                yield items;
            }
            default -> throw new IOException("not a RESP reply: " + (char) type + line);
        };
    }

    private static String line(InputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        for (int c = in.read(); c != '\r'; c = in.read()) {
            if (c < 0) {
                throw new IOException("connection closed mid-reply");
            }
            line.append((char) c);
        }
        in.read();
        return line.toString();
    }

    private Resp() {
    }
}
