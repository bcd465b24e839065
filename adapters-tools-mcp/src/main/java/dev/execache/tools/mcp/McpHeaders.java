package dev.execache.tools.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The headers Streamable HTTP mirrors from a request's body (2026-07-28, "Standard Request Headers" and "Custom Headers
 * from Tool Parameters"): {@code Mcp-Method}, {@code Mcp-Name}, and the {@code Mcp-Param-{Name}} headers a tool declares
 * with {@code x-mcp-header} on its input schema's properties, so that what routes on headers on the way sees what the
 * server will act on.
 */
final class McpHeaders {
    static final String DECLARATION = "x-mcp-header";
    private static final String SENTINEL_START = "=?base64?";
    private static final String SENTINEL_END = "?=";
    /** RFC 9110's tchar, besides letters and digits. */
    private static final String TOKEN_SYMBOLS = "!#$%&'*+-.^_`|~";
    private static final Set<String> PRIMITIVE = Set.of("string", "integer", "boolean");

    private McpHeaders() {
    }

    /** Mcp-Method (and Mcp-Name for tools/call, resources/read, prompts/get) of one JSON-RPC request or notification. */
    static Map<String, String> standard(JsonNode message) {
        Map<String, String> headers = new LinkedHashMap<>();
        String method = message.path("method").textValue();
        if (method == null) {
            return headers;
        }
        headers.put("Mcp-Method", method);
        JsonNode name = switch (method) {
            case "tools/call", "prompts/get" -> message.path("params").path("name");
            case "resources/read" -> message.path("params").path("uri");
            default -> null;
        };
        if (name != null && name.isTextual()) {
            headers.put("Mcp-Name", encode(name.textValue()));
        }
        return headers;
    }

    /**
     * A header value as the spec encodes it: as is when it is plain visible ASCII (inner spaces allowed), else
     * {@code =?base64?...?=} of its UTF-8 bytes; a plain value that looks encoded is encoded too.
     */
    static String encode(String value) {
        boolean plain = !value.startsWith(" ") && !value.endsWith(" ")
                && !(value.startsWith(SENTINEL_START) && value.endsWith(SENTINEL_END));
        for (int i = 0; plain && i < value.length(); i++) {
            char c = value.charAt(i);
            plain = c >= 0x20 && c <= 0x7e;
        }
        return plain ? value : SENTINEL_START + Base64.getEncoder().encodeToString(value.getBytes(StandardCharsets.UTF_8))
                + SENTINEL_END;
    }

    /** A tool's {@code x-mcp-header} declarations: the header name of each property path. */
    record Declarations(Map<List<String>, String> headers) {
        static final Declarations NONE = new Declarations(Map.of());

        /** The Mcp-Param headers of a call with these arguments; a value absent or null sends none. */
        Map<String, String> of(JsonNode arguments) {
            Map<String, String> values = new LinkedHashMap<>();
            headers.forEach((path, name) -> {
                JsonNode value = arguments;
                for (String step : path) {
                    value = value == null ? null : value.get(step);
                }
                if (value != null && (value.isTextual() || value.isNumber() || value.isBoolean())) {
                    values.put("Mcp-Param-" + name, encode(value.isTextual() ? value.textValue()
                            : value.isBoolean() ? Boolean.toString(value.booleanValue())
                            : value.decimalValue().stripTrailingZeros().toPlainString()));
                }
            });
            return values;
        }
    }

    /** Why a tool's declarations break the spec's constraints, which makes the tool one a client must not offer. */
    static final class InvalidDeclarationException extends Exception {
        InvalidDeclarationException(String message) {
            super(message);
        }
    }

    /**
     * The declarations of a tool's input schema: each on a property reached from the root through {@code properties}
     * alone, of type string, integer or boolean, its name a non-empty HTTP token unique among them whatever the case.
     */
    static Declarations declarations(JsonNode inputSchema) throws InvalidDeclarationException {
        Map<List<String>, String> headers = new LinkedHashMap<>();
        List<String> invalid = new ArrayList<>();
        walk(inputSchema, new ArrayList<>(), true, headers, invalid);
        Set<String> seen = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
        for (String name : headers.values()) {
            if (!seen.add(name)) {
                invalid.add("the header name " + name + " is declared twice (names are compared ignoring case)");
            }
        }
        if (!invalid.isEmpty()) {
            throw new InvalidDeclarationException(String.join("; ", invalid));
        }
        return headers.isEmpty() ? Declarations.NONE : new Declarations(Map.copyOf(headers));
    }

    /**
     * Every {@code x-mcp-header} under {@code node}; {@code reachable}: {@code node} is a property's schema reached from
     * the root through {@code properties} alone ({@code path} holds those properties' names).
     */
    private static void walk(JsonNode node, List<String> path, boolean reachable, Map<List<String>, String> headers,
            List<String> invalid) {
        if (node == null || !node.isContainerNode()) {
            return;
        }
        if (node.isArray()) {
            node.forEach(each -> walk(each, path, false, headers, invalid));
            return;
        }
        if (node.has(DECLARATION)) {
            String where = path.isEmpty() ? "the schema's root" : "property " + String.join(".", path);
            JsonNode declared = node.get(DECLARATION);
            if (!reachable || path.isEmpty()) {
                invalid.add(DECLARATION + " on " + where + ", which is not a property reached through properties alone");
            } else if (!declared.isTextual() || !isToken(declared.textValue())) {
                invalid.add(DECLARATION + " of " + where + " is not an HTTP header name (a non-empty token of"
                        + " letters, digits and !#$%&'*+-.^_`|~)");
            } else if (!isPrimitive(node.get("type"))) {
                invalid.add(DECLARATION + " on " + where + ", which is not of type string, integer or boolean");
            } else {
                headers.put(List.copyOf(path), declared.textValue());
            }
        }
        for (Map.Entry<String, JsonNode> field : node.properties()) {
            if (field.getKey().equals("properties") && reachable && field.getValue().isObject()) {
                for (Map.Entry<String, JsonNode> property : field.getValue().properties()) {
                    List<String> deeper = new ArrayList<>(path);
                    deeper.add(property.getKey());
                    walk(property.getValue(), deeper, true, headers, invalid);
                }
            } else if (!field.getKey().equals(DECLARATION)) {
                walk(field.getValue(), path, false, headers, invalid);
            }
        }
    }

    private static boolean isToken(String name) {
        if (name.isEmpty()) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            boolean letterOrDigit = c < 0x80 && Character.isLetterOrDigit(c);
            if (!letterOrDigit && TOKEN_SYMBOLS.indexOf(c) < 0) {
                return false;
            }
        }
        return true;
    }

    /** string, integer or boolean; a list of types may add only "null" to one of them. */
    private static boolean isPrimitive(JsonNode type) {
        if (type == null) {
            return false;
        }
        if (type.isTextual()) {
            return PRIMITIVE.contains(type.textValue());
        }
        if (!type.isArray()) {
            return false;
        }
        int primitives = 0;
        for (JsonNode one : type) {
            if (PRIMITIVE.contains(one.asText())) {
                primitives++;
            } else if (!"null".equals(one.asText())) {
                return false;
            }
        }
        return primitives == 1;
    }
}
