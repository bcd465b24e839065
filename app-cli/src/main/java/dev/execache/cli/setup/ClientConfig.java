package dev.execache.cli.setup;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.toml.TomlMapper;
import dev.execache.cli.settings.ParseErrors;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A client file as read: its bytes (kept, so that a file changed while setup runs is noticed),
 * its tree, and the servers it lists.
 */
record ClientConfig(ClientFile file, Path realPath, byte[] bytes, String text, JsonNode root, List<FoundServer> servers) {
    static final TomlMapper TOML = new TomlMapper();

    static ClientConfig read(ClientFile file) throws IOException {
        Path real = file.path().toRealPath();
        byte[] bytes = Files.readAllBytes(real);
        String text = new String(bytes, StandardCharsets.UTF_8);
        JsonNode root = file.toml() ? parseToml(file.path(), text) : JsonText.parse(file.path(), text);
        if (!root.isObject()) {
            throw new SetupException(file.path() + ": the file holds no JSON object");
        }
        List<FoundServer> servers = new ArrayList<>();
        for (List<String> container : containers(file, root)) {
            JsonNode listed = at(root, container);
            if (listed.isMissingNode() || listed.isNull()) {
                continue;
            }
            if (!listed.isObject()) {
                throw new SetupException(file.path() + ": " + String.join(".", container)
                        + " is not an object mapping each server's name to its entry");
            }
            listed.fields().forEachRemaining(server ->
                    servers.add(ServerEntries.read(file, container, server.getKey(), server.getValue())));
        }
        return new ClientConfig(file, real, bytes, text, root, List.copyOf(servers));
    }

    static JsonNode parseToml(Path path, String text) {
        try {
            JsonNode root = TOML.readTree(text);
            return root == null ? TOML.createObjectNode() : root;
        } catch (JacksonException e) {
            throw new SetupException(ParseErrors.describe(path, "TOML", text, e));
        }
    }

    /** Where the file lists servers: its one list, and for Claude Code's user file also each project's. */
    static List<List<String>> containers(ClientFile file, JsonNode root) {
        List<List<String>> containers = new ArrayList<>();
        containers.add(List.of(file.client().serversKey));
        if (file.client() == McpClient.CLAUDE_CODE && file.scope().equals("user") && root.path("projects").isObject()) {
            root.path("projects").fieldNames().forEachRemaining(project -> {
                if (root.path("projects").path(project).has("mcpServers")) {
                    containers.add(List.of("projects", project, "mcpServers"));
                }
            });
        }
        return containers;
    }

    static JsonNode at(JsonNode root, List<String> keys) {
        JsonNode node = root;
        for (String key : keys) {
            node = node.path(key);
        }
        return node;
    }
}
