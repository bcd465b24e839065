package dev.execache.mcp.server.http;

import dev.execache.mcp.server.protocol.JsonRpc;
import dev.execache.mcp.server.protocol.JsonText;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/** The HTTP server's replies that are not an MCP answer: refusals (as JSON-RPC errors), text, files. */
final class HttpReplies {
    private HttpReplies() {
    }

    static boolean text(Response response, Callback callback, int status, String text) {
        return send(response, callback, status, "text/plain; charset=utf-8", text.getBytes(StandardCharsets.UTF_8));
    }

    static boolean send(Response response, Callback callback, int status, String type, byte[] body) {
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, type);
        response.write(true, ByteBuffer.wrap(body), callback);
        return true;
    }

    static void accepted(Response response, Callback callback) {
        response.setStatus(202);
        callback.succeeded();
    }

    static boolean refuse(Response response, Callback callback, HttpAccess.Refusal refusal) {
        if (refusal.challenge() != null) {
            response.getHeaders().put(HttpHeader.WWW_AUTHENTICATE, refusal.challenge());
        }
        if (refusal.status() == 503) {
            response.getHeaders().put(HttpHeader.RETRY_AFTER, "5");
        }
        return refuse(response, callback, refusal.status(), -32000, refusal.message());
    }

    static boolean refuse(Response response, Callback callback, int status, int code, String message) {
        return refuse(response, callback, status, code, message, null);
    }

    static boolean refuse(Response response, Callback callback, int status, int code, String message,
            JsonNode data) {
        sendJson(response, callback, status, JsonRpc.error(null, code, message, data));
        return true;
    }

    static void sendJson(Response response, Callback callback, int status, String json) {
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        Content.Sink.write(response, true, JsonText.escapeLoneSurrogates(json), callback);
    }

    /** A header value as it may be logged: printable ASCII, at most 80 characters. */
    static String printable(String value) {
        if (value == null) {
            return "(none)";
        }
        String clean = value.replaceAll("[^\\x20-\\x7e]", "?");
        return clean.length() <= 80 ? clean : clean.substring(0, 77) + "...";
    }
}
