package dev.execache.tools.mcp;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * One downstream MCP server, in the shape agent hosts use for {@code mcpServers}: a command
 * started with its arguments, environment and working directory, spoken to over stdio.
 * (A server reached over HTTP is a {@link UrlServerSettings}.)
 *
 * @param name how execache names the server; its tools are offered as {@code NAME__TOOL}
 * @param env added to execache's own environment (which the server inherits, less execache's
 *     secrets: the signing keys and the Redis URL)
 * @param cwd where the command runs; null for execache's working directory
 * @param trustAnnotations whether the server's {@code readOnlyHint} may decide what is cached
 * @param inherited the environment the server inherits (less execache's secrets), or null for
 *     this process's: a resident server starts a command's servers with that command's own
 */
public record McpServerSettings(String name, String command, List<String> args, Map<String, String> env, Path cwd,
        boolean trustAnnotations, Map<String, String> inherited) implements DownstreamSettings {
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_-]*");

    public McpServerSettings {
        if (name == null || !NAME.matcher(name).matches() || name.contains("__")) {
            throw new IllegalArgumentException("server name '" + name + "' must be letters, digits, '-' or '_'"
                    + " (not two underscores in a row, which separate server and tool)");
        }
        if (command == null || command.isBlank()) {
            throw new IllegalArgumentException("server " + name + ": command must not be blank");
        }
        args = List.copyOf(Objects.requireNonNullElse(args, List.of()));
        env = Map.copyOf(Objects.requireNonNullElse(env, Map.of()));
        inherited = inherited == null ? null : Map.copyOf(inherited);
    }

    /** Inheriting this process's environment. */
    public McpServerSettings(String name, String command, List<String> args, Map<String, String> env, Path cwd,
            boolean trustAnnotations) {
        this(name, command, args, env, cwd, trustAnnotations, null);
    }

    /**
     * Started on behalf of a command: inheriting its environment, and running in its working
     * directory unless {@link #cwd} names one.
     */
    @Override
    public McpServerSettings startedFor(Map<String, String> environment, Path workingDir) {
        return new McpServerSettings(name, command, args, env, cwd == null ? workingDir : cwd, trustAnnotations, environment);
    }
}
