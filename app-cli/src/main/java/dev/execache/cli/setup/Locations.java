package dev.execache.cli.setup;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Where each client keeps its MCP servers, from the environment (HOME, XDG_CONFIG_HOME,
 * CLAUDE_CONFIG_DIR, CODEX_HOME), so that tests and people with moved homes are looked up where
 * their clients look.
 */
record Locations(Path home, Path configHome, Path workingDir, boolean mac, Path claudeConfigDir, Path codexHome) {

    static Locations of(Map<String, String> env, Path workingDir) {
        Path home = absolute(env.get("HOME"));
        if (home == null) {
            throw new SetupException("HOME is not set (or not an absolute path): setup looks for the clients' files there");
        }
        Path configHome = absolute(env.get("XDG_CONFIG_HOME"));
        Path claude = absolute(env.get("CLAUDE_CONFIG_DIR"));
        Path codex = absolute(env.get("CODEX_HOME"));
        boolean mac = System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("mac");
        return new Locations(home, configHome == null ? home.resolve(".config") : configHome, workingDir, mac,
                claude == null ? home : claude, codex == null ? home.resolve(".codex") : codex);
    }

    private static Path absolute(String value) {
        return value == null || value.isBlank() || !Path.of(value).isAbsolute() ? null : Path.of(value);
    }

    /** Every file a client may keep servers in, whether or not it exists, in a fixed order. */
    List<ClientFile> candidates() {
        Path applicationSupport = home.resolve("Library/Application Support");
        List<ClientFile> files = new ArrayList<>();
        files.add(new ClientFile(McpClient.CLAUDE_CODE, "user", claudeConfigDir.resolve(".claude.json")));
        files.add(new ClientFile(McpClient.CLAUDE_CODE, "project", workingDir.resolve(".mcp.json")));
        files.add(new ClientFile(McpClient.CLAUDE_DESKTOP, "user", mac
                ? applicationSupport.resolve("Claude/claude_desktop_config.json")
                : configHome.resolve("Claude/claude_desktop_config.json")));
        files.add(new ClientFile(McpClient.CURSOR, "user", home.resolve(".cursor/mcp.json")));
        files.add(new ClientFile(McpClient.CURSOR, "project", workingDir.resolve(".cursor/mcp.json")));
        files.add(new ClientFile(McpClient.VSCODE, "user", mac
                ? applicationSupport.resolve("Code/User/mcp.json") : configHome.resolve("Code/User/mcp.json")));
        files.add(new ClientFile(McpClient.VSCODE, "project", workingDir.resolve(".vscode/mcp.json")));
        files.add(new ClientFile(McpClient.WINDSURF, "user", home.resolve(".codeium/windsurf/mcp_config.json")));
        files.add(new ClientFile(McpClient.CODEX, "user", codexHome.resolve("config.toml")));
        files.add(new ClientFile(McpClient.CODEX, "project", workingDir.resolve(".codex/config.toml")));
        // Zed reads ~/.config/zed on macOS too, not Library/Application Support
        files.add(new ClientFile(McpClient.ZED, "user", (mac ? home.resolve(".config") : configHome)
                .resolve("zed/settings.json")));
        files.add(new ClientFile(McpClient.ZED, "project", workingDir.resolve(".zed/settings.json")));
        return files;
    }
}
