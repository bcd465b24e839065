package dev.execache.cli.setup;

import java.nio.file.Path;

/**
 * One configuration file of an MCP client.
 *
 * @param scope "user" (the person's, for every project) or "project" (in the working directory)
 */
record ClientFile(McpClient client, String scope, Path path) {
    boolean toml() {
        return client == McpClient.CODEX;
    }

    String describe() {
        return client.title + " (" + scope + ") " + path;
    }
}
