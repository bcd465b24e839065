package dev.execache.mcp.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * HTTP/1.1 spoken by hand over a socket, one request per connection: a test must be able to send
 * any Host, Origin or body, which the JDK's client refuses to.
 */
public final class RawHttp {
    private static final ObjectMapper JSON = new ObjectMapper();

    private RawHttp() {
    }

    public record Answer(int status, Map<String, String> headers, String body) {
        public JsonNode json() throws IOException {
            return JSON.readTree(body);
        }

        public String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }

        /** The data of each SSE event named message, as JSON. */
        public List<JsonNode> events() throws IOException {
            List<JsonNode> events = new ArrayList<>();
            for (String block : body.split("\n\n")) {
                for (String line : block.split("\n")) {
                    if (line.startsWith("data: ")) {
                        events.add(JSON.readTree(line.substring(6)));
                    }
                }
            }
            return events;
        }
    }

    /** POSTs a JSON body to /mcp with the given headers (Host, Content-Type and Accept added unless given). */
    public static Answer post(int port, String body, Map<String, String> headers) throws IOException {
        return send(port, "POST", "/mcp", body, headers);
    }

    public static Answer send(int port, String method, String path, String body, Map<String, String> given) throws IOException {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Host", "127.0.0.1:" + port);
        headers.put("Content-Type", "application/json");
        headers.put("Accept", "application/json, text/event-stream");
        headers.putAll(given);
        headers.values().removeIf(value -> value == null);
        byte[] bytes = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
        StringBuilder request = new StringBuilder(method + " " + path + " HTTP/1.1\r\n");
        headers.forEach((name, value) -> request.append(name).append(": ").append(value).append("\r\n"));
        request.append("Content-Length: ").append(bytes.length).append("\r\nConnection: close\r\n\r\n");
        try (Socket socket = new Socket("127.0.0.1", port)) {
            OutputStream out = socket.getOutputStream();
            out.write(request.toString().getBytes(StandardCharsets.ISO_8859_1));
            out.write(bytes);
            out.flush();
            return read(socket.getInputStream());
        }
    }

    private static Answer read(InputStream in) throws IOException {
        byte[] all = in.readAllBytes();
        String text = new String(all, StandardCharsets.ISO_8859_1);
        int end = text.indexOf("\r\n\r\n");
        String[] head = text.substring(0, end).split("\r\n");
        int status = Integer.parseInt(head[0].split(" ")[1]);
        Map<String, String> headers = new LinkedHashMap<>();
        for (int i = 1; i < head.length; i++) {
            int colon = head[i].indexOf(':');
            headers.put(head[i].substring(0, colon).trim().toLowerCase(Locale.ROOT), head[i].substring(colon + 1).trim());
        }
        byte[] rest = Arrays.copyOfRange(all, end + 4, all.length);
        if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
            rest = dechunk(rest);
        }
        return new Answer(status, headers, new String(rest, StandardCharsets.UTF_8));
    }

    private static byte[] dechunk(byte[] body) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int at = 0;
        while (at < body.length) {
            int lineEnd = at;
            while (lineEnd + 1 < body.length && !(body[lineEnd] == '\r' && body[lineEnd + 1] == '\n')) {
                lineEnd++;
            }
            String size = new String(body, at, lineEnd - at, StandardCharsets.ISO_8859_1).split(";")[0].trim();
            int length = size.isEmpty() ? 0 : Integer.parseInt(size, 16);
            if (length == 0) {
                break;
            }
            out.write(body, lineEnd + 2, length);
            at = lineEnd + 2 + length + 2;
        }
        return out.toByteArray();
    }
}
