package dev.execache.cli.setup;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * One server a client file lists.
 *
 * @param container the keys leading to the object that lists it, e.g. {@code [mcpServers]} or
 *     {@code [projects, /home/me/app, mcpServers]}
 * @param definition what it becomes under execache's {@code servers:} (command, args, env, cwd or
 *     url, headers), or null when it stays in the client
 * @param stays why it stays in the client, or null when it can move
 */
record FoundServer(ClientFile file, List<String> container, String name, JsonNode entry, ObjectNode definition,
        String stays, boolean execache) {

    static FoundServer movable(ClientFile file, List<String> container, String name, JsonNode entry, ObjectNode definition) {
        return new FoundServer(file, container, name, entry, definition, null, false);
    }

    static FoundServer staying(ClientFile file, List<String> container, String name, JsonNode entry, String why) {
        return new FoundServer(file, container, name, entry, null, why, false);
    }

    static FoundServer execacheItself(ClientFile file, List<String> container, String name, JsonNode entry) {
        return new FoundServer(file, container, name, entry, null, null, true);
    }

    boolean movable() {
        return definition != null;
    }

    /** Where in its file it is listed, for a person: "" for the file's own list, else the project. */
    String where() {
        return container.size() == 3 && container.get(0).equals("projects") ? "project " + container.get(1) : "";
    }
}
