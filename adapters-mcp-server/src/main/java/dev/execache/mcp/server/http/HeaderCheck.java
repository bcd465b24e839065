package dev.execache.mcp.server.http;

import dev.execache.gateway.Json;
import dev.execache.mcp.server.protocol.JsonRpc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelcontextprotocol.spec.McpSchema;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.eclipse.jetty.server.Request;

/**
 * The 2026-07-28 era's header checks: MCP-Protocol-Version, Mcp-Method and Mcp-Name must say
 * what the body says (400, HeaderMismatch), and an envelope must be whole.
 */
record HeaderCheck(int code, String message, JsonNode data) {
    private static final String BASE64_PREFIX = "=?base64?";
    private static final String BASE64_SUFFIX = "?=";

    /** What is wrong with the headers of {@code request} given its body {@code message}; null when nothing is. */
    static HeaderCheck of(Request request, ObjectNode message, boolean isRequest) {
        if (message == null) {
            return null;
        }
        String method = message.get("method").textValue();
        JsonNode params = message.get("params");
        String version = header(request, "MCP-Protocol-Version");
        String methodHeader = header(request, "Mcp-Method");
        boolean headerModern = version != null && version.compareTo(JsonRpc.MODERN) >= 0
                && !JsonRpc.LEGACY.contains(version);
        boolean claims = JsonRpc.claimsEnvelope(params);
        if (McpSchema.METHOD_INITIALIZE.equals(method) && !claims) {
            return headerModern ? mismatch(version, "an initialize request (the 2025 handshake) was sent with "
                    + "MCP-Protocol-Version " + version) : null;
        }
        if (claims) {
            if (JsonRpc.envelopeProblem(params) != null) {
                // answered by JsonRpc's check of the envelope
                return null;
            }
            String claimed = params.get("_meta").get(JsonRpc.PROTOCOL_VERSION_META).textValue();
            if (version != null && !version.equals(claimed)) {
                return mismatch(version, "the body's _meta names protocol version " + claimed
                        + " but the MCP-Protocol-Version header names " + version);
            }
            if (methodHeader != null && !methodHeader.equals(method)) {
                return mismatch(methodHeader, "the body names method " + method + " but the Mcp-Method header names "
                        + methodHeader);
            }
            if (!isRequest) {
                return null;
            }
            if (!JsonRpc.MODERN.equals(claimed)) {
                // answered by JsonRpc's check of the envelope
                return null;
            }
            if (version == null) {
                return mismatch("(missing)", "the body's _meta names protocol version " + claimed
                        + " but the MCP-Protocol-Version header is missing");
            }
            if (methodHeader == null) {
                return mismatch("(missing)", "the body names method " + method + " but the Mcp-Method header is missing");
            }
            if (McpSchema.METHOD_TOOLS_CALL.equals(method) && params.path("name").isTextual()) {
                String name = params.get("name").textValue();
                String nameHeader = header(request, "Mcp-Name");
                if (nameHeader == null) {
                    return mismatch("(missing)", "the body calls tool " + name + " but the Mcp-Name header is missing");
                }
                String decoded = decode(nameHeader);
                if (!name.equals(decoded)) {
                    return mismatch(nameHeader, "the body calls tool " + name + " but the Mcp-Name header names "
                            + (decoded == null ? "an invalid Base64 value" : decoded));
                }
            }
            return null;
        }
        if (headerModern) {
            if (!isRequest) {
                return methodHeader != null && !methodHeader.equals(method) ? mismatch(methodHeader,
                        "the body names method " + method + " but the Mcp-Method header names " + methodHeader) : null;
            }
            return new HeaderCheck(McpSchema.ErrorCodes.INVALID_PARAMS, "Invalid params: the MCP-Protocol-Version "
                    + "header names " + version + ", but the request has no _meta envelope ("
                    + JsonRpc.PROTOCOL_VERSION_META + ", " + JsonRpc.CLIENT_CAPABILITIES_META + ")",
                    null);
        }
        if (version != null && !JsonRpc.LEGACY.contains(version) && !JsonRpc.MODERN.equals(version)) {
            return new HeaderCheck(McpSchema.ErrorCodes.INVALID_REQUEST, "Bad Request: unsupported "
                    + "MCP-Protocol-Version " + version + " (supported: " + JsonRpc.MODERN + ", "
                    + String.join(", ", JsonRpc.LEGACY) + ")", null);
        }
        return null;
    }

    private static HeaderCheck mismatch(String header, String body) {
        ObjectNode data = Json.MAPPER.createObjectNode();
        ObjectNode mismatch = data.putObject("mismatch");
        mismatch.put("header", header);
        mismatch.put("body", body);
        return new HeaderCheck(JsonRpc.HEADER_MISMATCH,
                "Bad Request: the request headers and body disagree: " + body, data);
    }

    private static String header(Request request, String name) {
        String value = request.getHeaders().get(name);
        return value == null ? null : value.strip();
    }

    /** An Mcp-Name value: as it is, or Base64 between =?base64? and ?= (names that are not plain ASCII). */
    private static String decode(String value) {
        if (!(value.startsWith(BASE64_PREFIX) && value.endsWith(BASE64_SUFFIX))) {
            return value;
        }
        try {
            return new String(Base64.getDecoder().decode(value.substring(BASE64_PREFIX.length(),
                    value.length() - BASE64_SUFFIX.length())), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
