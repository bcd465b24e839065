package dev.execache.cli.setup;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** An MCP client whose configuration setup reads and rewrites. */
enum McpClient {
    CLAUDE_CODE("claude-code", "Claude Code", "mcpServers"),
    CLAUDE_DESKTOP("claude-desktop", "Claude Desktop", "mcpServers"),
    CURSOR("cursor", "Cursor", "mcpServers"),
    VSCODE("vscode", "VS Code", "servers"),
    WINDSURF("windsurf", "Windsurf", "mcpServers"),
    CODEX("codex", "Codex", "mcp_servers"),
    ZED("zed", "Zed", "context_servers");

    final String id;
    final String title;
    /** The key of the object that maps each server's name to its entry. */
    final String serversKey;

    McpClient(String id, String title, String serversKey) {
        this.id = id;
        this.title = title;
        this.serversKey = serversKey;
    }

    static String ids() {
        return Arrays.stream(values()).map(client -> client.id).collect(Collectors.joining(", "));
    }

    static McpClient byId(String id) {
        for (McpClient client : values()) {
            if (client.id.equals(id.toLowerCase(Locale.ROOT))) {
                return client;
            }
        }
        throw new SetupException("--client " + id + " is not a client setup knows (known: " + ids() + ")");
    }
}
