package dev.execache.tools.mcp;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
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
 * @param sharePublic whether its answers may be shared with every configuration of it ({@code share:
 *     public}): they do not depend on who asks. Otherwise ({@code share: private}, the default) only
 *     with identical configurations, see {@link #identity}
 * @param inherited the environment the server inherits (less execache's secrets), or null for
 *     this process's: a resident server starts a command's servers with that command's own
 */
public record McpServerSettings(String name, String command, List<String> args, Map<String, String> env, Path cwd,
        boolean trustAnnotations, boolean sharePublic, Map<String, String> inherited) implements DownstreamSettings {
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

    /** Private to its configuration, inheriting this process's environment. */
    public McpServerSettings(String name, String command, List<String> args, Map<String, String> env, Path cwd,
            boolean trustAnnotations) {
        this(name, command, args, env, cwd, trustAnnotations, false, null);
    }

    /**
     * Started on behalf of a command: inheriting its environment, and running in its working
     * directory unless {@link #cwd} names one.
     */
    @Override
    public McpServerSettings startedFor(Map<String, String> environment, Path workingDir) {
        return new McpServerSettings(name, command, args, env, cwd == null ? workingDir : cwd, trustAnnotations,
                sharePublic, environment);
    }

    /** The same server, shared with every configuration of it ({@code share: public}) or not. */
    public McpServerSettings withSharePublic(boolean shared) {
        return new McpServerSettings(name, command, args, env, cwd, trustAnnotations, shared, inherited);
    }

    /**
     * How the server is reached, as a one-way digest (128 bits, hex) of everything in its
     * configuration that can change its answers: the command, its arguments, the values of its
     * {@code env} and its working directory (a url server's would be its URL and header values).
     * Identical configurations have the same identity, any difference gives another; no value can
     * be read back from it. The environment it inherits is not part of it: a credential the
     * answers depend on belongs in {@code env}. Null for a server shared publicly.
     *
     * @param key keys the digest (HMAC-SHA256) so that only holders of the key can test a guess
     *     against it; null or empty for a plain SHA-256
     */
    @Override
    public String identity(byte[] key) {
        if (sharePublic) {
            return null;
        }
        Map<String, Object> reached = new TreeMap<>();
        reached.put("kind", "command");
        reached.put("command", command);
        reached.put("args", args);
        reached.put("env", new TreeMap<>(env));
        reached.put("cwd", (cwd == null ? Path.of("") : cwd).toAbsolutePath().normalize().toString());
        return ServerIdentity.of(name, reached, key);
    }

    /** Names the server and its command, never the values of its environment, which may be secrets. */
    @Override
    public String toString() {
        return "McpServerSettings[name=" + name + ", command=" + command + ", env=" + new TreeMap<>(env).keySet()
                + ", cwd=" + cwd + ", trustAnnotations=" + trustAnnotations + ", sharePublic=" + sharePublic + "]";
    }
}
