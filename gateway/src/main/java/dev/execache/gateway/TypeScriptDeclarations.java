package dev.execache.gateway;

import dev.execache.core.spi.CatalogTool;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * TypeScript declarations of the tools code can call: {@code declare const tools: { SERVER: {
 * TOOL(args: {...}): Promise<...> } }}, from each tool's input and output schemas (JSON
 * Schema), with its description as a doc comment, so an agent can write typed code in one try.
 * A schema this does not model ($ref, patterns of keys) becomes {@code unknown}, never a wrong type.
 */
public final class TypeScriptDeclarations {
    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_$][A-Za-z0-9_$]*");
    private static final int MAX_DEPTH = 12;
    /** A doc comment as {@link #doc} writes it: its text cannot hold the end marker, which is escaped. */
    private static final Pattern DOC_COMMENT = Pattern.compile("/\\*\\*.*?\\*/", Pattern.DOTALL);

    private TypeScriptDeclarations() {
    }

    /** The declarations of the given tools (only the reachable ones, grouped by server). */
    public static String of(Collection<CatalogTool> tools, Set<String> reachableServers) {
        Map<String, List<CatalogTool>> byServer = new TreeMap<>();
        for (CatalogTool tool : tools) {
            if (reachableServers.contains(tool.server())) {
                byServer.computeIfAbsent(tool.server(), server -> new ArrayList<>()).add(tool);
            }
        }
        StringBuilder out = new StringBuilder();
        out.append("/** The tools code can call through execache: `await tools.SERVER.TOOL(args)`. */\n");
        out.append("declare const tools: {\n");
        for (Map.Entry<String, List<CatalogTool>> server : byServer.entrySet()) {
            out.append("  ").append(key(server.getKey())).append(": {\n");
            for (CatalogTool tool : server.getValue()) {
                Map<String, Object> definition = tool.definition();
                doc(out, "    ", text(definition.get("description")));
                Object input = definition.get("inputSchema");
                String args = type(input, "    ", 0);
                boolean optional = !(input instanceof Map<?, ?> schema && schema.get("required") instanceof List<?> required
                        && !required.isEmpty());
                Object output = definition.get("outputSchema");
                out.append("    ").append(key(tool.serverToolName())).append("(args").append(optional ? "?" : "")
                        .append(": ").append(args).append("): Promise<")
                        .append(output == null ? "unknown" : type(output, "    ", 0)).append(">;\n");
            }
            out.append("  };\n");
        }
        out.append("};\n");
        return out.toString();
    }

    /**
     * One tool's signature on one line, as a search result shows it: {@code TOOL(args: {a: string; b?: number}):
     * Promise<unknown>}, without doc comments (describe_tools gives those).
     */
    static String signature(CatalogTool tool) {
        Map<String, Object> definition = tool.definition();
        Object input = definition.get("inputSchema");
        boolean optional = !(input instanceof Map<?, ?> schema && schema.get("required") instanceof List<?> required
                && !required.isEmpty());
        Object output = definition.get("outputSchema");
        String line = key(tool.serverToolName()) + "(args" + (optional ? "?" : "") + ": " + type(input, "", 0)
                + "): Promise<" + (output == null ? "unknown" : type(output, "", 0)) + ">";
        return DOC_COMMENT.matcher(line).replaceAll("").replaceAll("\\s+", " ").replace("{ ", "{")
                .replace("; }", "}");
    }

    /** How code names a tool: {@code tools.SERVER.TOOL}, quoted where a name is no identifier. */
    static String callName(CatalogTool tool) {
        return "tools" + member(tool.server()) + member(tool.serverToolName());
    }

    private static String member(String name) {
        return IDENTIFIER.matcher(name).matches() ? "." + name : "[" + literal(name) + "]";
    }

    private static String type(Object schemaValue, String indent, int depth) {
        if (!(schemaValue instanceof Map<?, ?> schema) || depth > MAX_DEPTH) {
            return schemaValue == Boolean.FALSE ? "never" : "unknown";
        }
        if (schema.containsKey("const")) {
            return literal(schema.get("const"));
        }
        if (schema.get("enum") instanceof List<?> values && !values.isEmpty()) {
            List<String> literals = new ArrayList<>();
            values.forEach(value -> literals.add(literal(value)));
            return String.join(" | ", literals);
        }
        for (String union : List.of("anyOf", "oneOf")) {
            if (schema.get(union) instanceof List<?> options && !options.isEmpty()) {
                Set<String> types = new LinkedHashSet<>();
                options.forEach(option -> types.add(type(option, indent, depth + 1)));
                return types.size() == 1 ? types.iterator().next() : "(" + String.join(" | ", types) + ")";
            }
        }
        if (schema.get("allOf") instanceof List<?> parts && !parts.isEmpty()) {
            List<String> types = new ArrayList<>();
            parts.forEach(part -> types.add(type(part, indent, depth + 1)));
            return "(" + String.join(" & ", types) + ")";
        }
        Object typeValue = schema.get("type");
        if (typeValue instanceof List<?> several) {
            Set<String> types = new LinkedHashSet<>();
            for (Object one : several) {
                Map<String, Object> narrowed = new LinkedHashMap<>();
                schema.forEach((k, v) -> narrowed.put(String.valueOf(k), v));
                narrowed.put("type", one);
                types.add(type(narrowed, indent, depth + 1));
            }
            return "(" + String.join(" | ", types) + ")";
        }
        String type = typeValue instanceof String name ? name : schema.containsKey("properties") ? "object" : "";
        return switch (type) {
            case "string" -> "string";
            case "number", "integer" -> "number";
            case "boolean" -> "boolean";
            case "null" -> "null";
            case "array" -> "Array<" + type(schema.get("items"), indent, depth + 1) + ">";
            case "object" -> object(schema, indent, depth);
            default -> "unknown";
        };
    }

    private static String object(Map<?, ?> schema, String indent, int depth) {
        Map<?, ?> properties = schema.get("properties") instanceof Map<?, ?> map ? map : Map.of();
        Set<String> required = new TreeSet<>();
        if (schema.get("required") instanceof List<?> names) {
            names.forEach(name -> required.add(String.valueOf(name)));
        }
        Object additional = schema.get("additionalProperties");
        if (properties.isEmpty()) {
            if (Boolean.FALSE.equals(additional)) {
                return "Record<string, never>";
            }
            return "{ [key: string]: " + (additional instanceof Map<?, ?> ? type(additional, indent, depth + 1) : "unknown")
                    + " }";
        }
        String inner = indent + "  ";
        StringBuilder out = new StringBuilder("{\n");
        for (Map.Entry<?, ?> property : properties.entrySet()) {
            String name = String.valueOf(property.getKey());
            if (property.getValue() instanceof Map<?, ?> propertySchema) {
                doc(out, inner, text(propertySchema.get("description")));
            }
            out.append(inner).append(key(name)).append(required.contains(name) ? "" : "?").append(": ")
                    .append(type(property.getValue(), inner, depth + 1)).append(";\n");
        }
        if (!Boolean.FALSE.equals(additional) && additional != null) {
            out.append(inner).append("[key: string]: unknown;\n");
        }
        return out.append(indent).append("}").toString();
    }

    private static void doc(StringBuilder out, String indent, String text) {
        if (text == null || text.isBlank()) {
            return;
        }
        String safe = text.strip().replace("*/", "*\\/");
        out.append(indent).append("/**\n");
        for (String line : safe.split("\\R")) {
            out.append(indent).append(" * ").append(line).append('\n');
        }
        out.append(indent).append(" */\n");
    }

    private static String key(String name) {
        return IDENTIFIER.matcher(name).matches() ? name : literal(name);
    }

    private static String literal(Object value) {
        if (value instanceof String || value == null || value instanceof Number || value instanceof Boolean) {
            return Json.write(Json.MAPPER.valueToTree(value));
        }
        return "unknown";
    }

    private static String text(Object value) {
        return value instanceof String text ? text : null;
    }
}
