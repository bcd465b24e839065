package dev.execache.cli.setup;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Reads a client's entry for one server into the shape of execache's {@code servers:}, or says
 * why it stays where it is. Only what execache can carry exactly moves: a server that needs
 * something only its client does (its variables, its inputs, SSE, a disabled flag) stays.
 */
final class ServerEntries {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    /** Keys that say nothing about what the server answers: dropping them changes nothing that matters. */
    private static final Set<String> HARMLESS = Set.of("type", "description", "timeout", "startup_timeout_sec",
            "startup_timeout_ms", "tool_timeout_sec", "env_vars", "autoApprove", "alwaysAllow", "disabled", "enabled");
    private static final Set<String> URL_TYPES = Set.of("http", "streamable-http", "streamableHttp");
    /** The one form of variable execache fills in itself: {@code ${VAR}} in a header, from its environment. */
    private static final Pattern HEADER_VARIABLE = Pattern.compile("\\$\\{[A-Za-z_][A-Za-z0-9_]*}");
    private static final Set<String> EXECACHE_NAMES = Set.of("execache", "execache.cmd", "execache.exe");
    private static final Set<String> PACKAGE_RUNNERS = Set.of("npx", "bunx", "pnpx", "npx.cmd");

    private ServerEntries() {
    }

    static FoundServer read(ClientFile file, List<String> container, String name, JsonNode entry) {
        if (!entry.isObject()) {
            return FoundServer.staying(file, container, name, entry, "its entry is not an object");
        }
        ObjectNode normal;
        try {
            normal = normalize(file.client(), (ObjectNode) entry);
        } catch (Stays e) {
            return FoundServer.staying(file, container, name, entry, e.getMessage());
        }
        if (isExecache(normal)) {
            return FoundServer.execacheItself(file, container, name, entry);
        }
        try {
            return FoundServer.movable(file, container, name, entry, definition(file.client(), normal));
        } catch (Stays e) {
            return FoundServer.staying(file, container, name, entry, e.getMessage());
        }
    }

    /** Is this entry execache itself (so that setup never puts execache behind execache)? */
    static boolean isExecache(JsonNode entry) {
        JsonNode command = entry.path("command");
        if (!command.isTextual()) {
            return false;
        }
        String program = Path.of(command.textValue()).getFileName() == null ? ""
                : Path.of(command.textValue()).getFileName().toString();
        if (EXECACHE_NAMES.contains(program)) {
            return true;
        }
        for (JsonNode arg : entry.path("args")) {
            String text = arg.asText();
            if (PACKAGE_RUNNERS.contains(program) && (text.equals("execache") || text.startsWith("execache@"))) {
                return true;
            }
            if (text.endsWith("/execache.jar") || text.equals("execache.jar")) {
                return true;
            }
        }
        return false;
    }

    /** The entry in the common mcpServers shape: command, args, env, cwd or url, headers (and other keys as they are). */
    private static ObjectNode normalize(McpClient client, ObjectNode entry) {
        ObjectNode normal = entry.deepCopy();
        if (disabled(entry)) {
            throw new Stays("it is disabled in " + client.title);
        }
        switch (client) {
            case WINDSURF -> {
                if (normal.has("serverUrl")) {
                    normal.set("url", normal.remove("serverUrl"));
                }
            }
            case ZED -> {
                JsonNode source = normal.remove("source");
                if (source != null && !source.asText().equals("custom")) {
                    throw new Stays("a Zed extension provides it");
                }
                JsonNode command = normal.path("command");
                if (command.isObject()) {
                    normal.remove("command");
                    copy(command, "path", normal, "command");
                    copy(command, "args", normal, "args");
                    copy(command, "env", normal, "env");
                }
                JsonNode settings = normal.remove("settings");
                if (settings != null && !(settings.isObject() && settings.isEmpty())) {
                    throw new Stays("it has settings, which only Zed reads");
                }
                if (!normal.has("command") && !normal.has("url")) {
                    throw new Stays("a Zed extension provides it");
                }
            }
            case CODEX -> {
                ObjectNode headers = NODES.objectNode();
                JsonNode fixed = normal.remove("http_headers");
                if (fixed != null) {
                    requireObject(fixed, "http_headers");
                    headers.setAll((ObjectNode) fixed);
                }
                JsonNode fromEnv = normal.remove("env_http_headers");
                if (fromEnv != null) {
                    requireObject(fromEnv, "env_http_headers");
                    fromEnv.fields().forEachRemaining(header ->
                            headers.put(header.getKey(), "${" + header.getValue().asText() + "}"));
                }
                JsonNode bearer = normal.remove("bearer_token_env_var");
                if (bearer != null) {
                    headers.put("Authorization", "Bearer ${" + bearer.asText() + "}");
                }
                if (!headers.isEmpty()) {
                    normal.set("headers", headers);
                }
            }
            default -> {
            }
        }
        return normal;
    }

    private static boolean disabled(JsonNode entry) {
        return entry.path("disabled").asBoolean(false) || entry.path("enabled").isBoolean() && !entry.path("enabled").booleanValue();
    }

    private static void copy(JsonNode from, String key, ObjectNode to, String as) {
        if (from.has(key)) {
            to.set(as, from.get(key));
        }
    }

    private static ObjectNode definition(McpClient client, ObjectNode entry) {
        Set<String> unknown = new TreeSet<>();
        entry.fieldNames().forEachRemaining(key -> {
            if (!HARMLESS.contains(key) && !Set.of("command", "args", "env", "cwd", "url", "headers").contains(key)) {
                unknown.add(key);
            }
        });
        if (!unknown.isEmpty()) {
            throw new Stays("it has " + String.join(", ", unknown) + ", which execache cannot carry");
        }
        String type = entry.path("type").asText("");
        boolean byUrl = entry.has("url");
        if (type.equals("sse")) {
            throw new Stays("it uses the SSE transport; execache reaches url servers over Streamable HTTP");
        }
        if (!type.isEmpty() && !type.equals("stdio") && !URL_TYPES.contains(type)) {
            throw new Stays("its type '" + type + "' is not one execache knows");
        }
        ObjectNode definition = NODES.objectNode();
        if (byUrl) {
            if (entry.has("command")) {
                throw new Stays("it has both a command and a url");
            }
            String url = text(entry, "url");
            noVariables(client, "url", url);
            definition.put("url", url);
            ObjectNode headers = strings(entry, "headers");
            for (Map.Entry<String, JsonNode> header : iterable(headers.fields())) {
                String rest = HEADER_VARIABLE.matcher(header.getValue().textValue()).replaceAll("");
                if (rest.contains("${")) {
                    throw new Stays("its header " + header.getKey() + " uses a variable form only " + client.title
                            + " fills in (execache fills in ${NAME} from its environment)");
                }
            }
            if (!headers.isEmpty()) {
                definition.set("headers", headers);
            }
            return definition;
        }
        String command = text(entry, "command");
        if (command == null) {
            throw new Stays("it has neither a command nor a url");
        }
        noVariables(client, "command", command);
        definition.put("command", command);
        ArrayNode args = NODES.arrayNode();
        JsonNode argsNode = entry.path("args");
        if (!argsNode.isMissingNode() && !argsNode.isNull()) {
            if (!argsNode.isArray()) {
                throw new Stays("its args are not a list");
            }
            for (JsonNode arg : argsNode) {
                if (!arg.isValueNode() || arg.isNull()) {
                    throw new Stays("its args hold something other than strings");
                }
                noVariables(client, "args", arg.asText());
                args.add(arg.asText());
            }
        }
        if (!args.isEmpty()) {
            definition.set("args", args);
        }
        ObjectNode env = strings(entry, "env");
        for (Map.Entry<String, JsonNode> variable : iterable(env.fields())) {
            noVariables(client, "env " + variable.getKey(), variable.getValue().textValue());
        }
        if (!env.isEmpty()) {
            definition.set("env", env);
        }
        String cwd = text(entry, "cwd");
        if (cwd != null) {
            noVariables(client, "cwd", cwd);
            if (!Path.of(cwd).isAbsolute()) {
                throw new Stays("its cwd is relative to wherever " + client.title + " starts it");
            }
            definition.put("cwd", cwd);
        }
        return definition;
    }

    /** Claude Code's ${VAR}, VS Code's ${input:..}, Cursor's ${env:..}: execache would pass them on as text. */
    private static void noVariables(McpClient client, String where, String value) {
        if (value.contains("${")) {
            throw new Stays("its " + where + " uses a ${...} variable, which only " + client.title + " fills in");
        }
    }

    private static String text(JsonNode entry, String key) {
        JsonNode node = entry.path(key);
        if (node.isMissingNode() || node.isNull()) {
            return null;
        }
        if (!node.isTextual() || node.textValue().isBlank()) {
            throw new Stays("its " + key + " is not a non-empty string");
        }
        return node.textValue();
    }

    /** A map of names to values, every value as a string (a client may write a port as a number). */
    private static ObjectNode strings(JsonNode entry, String key) {
        ObjectNode strings = NODES.objectNode();
        JsonNode node = entry.path(key);
        if (node.isMissingNode() || node.isNull()) {
            return strings;
        }
        requireObject(node, key);
        for (Map.Entry<String, JsonNode> value : iterable(node.fields())) {
            if (!value.getValue().isValueNode() || value.getValue().isNull()) {
                throw new Stays("its " + key + " " + value.getKey() + " is not a string");
            }
            strings.put(value.getKey(), value.getValue().asText());
        }
        return strings;
    }

    private static void requireObject(JsonNode node, String key) {
        if (!node.isObject()) {
            throw new Stays("its " + key + " is not an object");
        }
    }

    private static <T> Iterable<T> iterable(Iterator<T> iterator) {
        List<T> items = new ArrayList<>();
        iterator.forEachRemaining(items::add);
        return items;
    }

    /** Why a server stays in its client; caught where the server is read, never seen outside. */
    private static final class Stays extends RuntimeException {
        Stays(String why) {
            super(why, null, false, false);
        }
    }
}
