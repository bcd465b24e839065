package dev.execache.tools.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;

/** Why a request to a url server did not get a result, in words a person can act on. */
final class HttpMcpException extends RuntimeException {
    enum Kind {
        /** 401 or 403: the server refused the credentials. */
        CREDENTIALS_REFUSED,
        /** 429 or 503: the server asked to be left alone for a while ({@link #retryAfter}). */
        RETRY_LATER,
        /** 404 on a request that carried a session: the server ended the session. */
        SESSION_EXPIRED,
        /** No connection could be made, or it broke before an answer. */
        UNREACHABLE,
        /** No answer within the call's time. */
        TIMEOUT,
        /** The requesting thread was interrupted (the call was cancelled): the request was ended. */
        CANCELLED,
        /** The server answered with a JSON-RPC error. */
        RPC_ERROR,
        /** Any other answer that is not MCP: an unexpected status or body. */
        PROTOCOL
    }

    private final Kind kind;
    private final int status;
    private final Duration retryAfter;
    private final String challenge;
    /** The JSON-RPC error of an {@link Kind#RPC_ERROR}, as the server sent it; null for the other kinds. */
    private JsonRpcError error;

    /** A JSON-RPC error answer, its code, message and data (null for none) as the server sent them. */
    record JsonRpcError(int code, String message, JsonNode data) {
    }

    static HttpMcpException rpcError(String server, int code, String message, JsonNode data) {
        HttpMcpException e = new HttpMcpException(Kind.RPC_ERROR, "server " + server + " answered an error: " + message
                + " (" + code + ")");
        e.error = new JsonRpcError(code, message, data);
        return e;
    }

    HttpMcpException(Kind kind, int status, Duration retryAfter, String message) {
        this(kind, status, retryAfter, null, message);
    }

    HttpMcpException(Kind kind, int status, Duration retryAfter, String challenge, String message) {
        super(message);
        this.kind = kind;
        this.status = status;
        this.retryAfter = retryAfter;
        this.challenge = challenge;
    }

    HttpMcpException(Kind kind, String message) {
        this(kind, 0, null, message);
    }

    /** The server's JSON-RPC error; null unless {@link #kind} is {@link Kind#RPC_ERROR}. */
    JsonRpcError error() {
        return error;
    }

    Kind kind() {
        return kind;
    }

    /** The HTTP status, 0 when there was none. */
    int status() {
        return status;
    }

    /** The WWW-Authenticate header of a 401, or null. */
    String challenge() {
        return challenge;
    }

    /** How long the server asked to wait, or null when it did not say. */
    Duration retryAfter() {
        return retryAfter;
    }
}
