package dev.execache.tools.mcp;

import java.nio.file.Path;
import java.util.Map;

/**
 * How execache reaches one downstream MCP server: a command it starts ({@link McpServerSettings})
 * or a URL it posts to ({@link UrlServerSettings}).
 */
public sealed interface DownstreamSettings permits McpServerSettings, UrlServerSettings {
    /** How execache names the server; its tools are offered as {@code NAME__TOOL}. */
    String name();

    /** Whether the server's {@code readOnlyHint} may decide what is cached. */
    boolean trustAnnotations();

    /** Whether its answers may be shared with every configuration of it ({@code share: public}). */
    boolean sharePublic();

    /**
     * The same server on behalf of a command: a command server inherits its environment and
     * working directory, a url server takes its {@code ${VAR}} values from that environment.
     */
    DownstreamSettings startedFor(Map<String, String> environment, Path workingDir);

    /**
     * How the server is reached, as a one-way digest (128 bits, hex) of everything in its
     * configuration that can change its answers; identical configurations have the same identity,
     * any difference gives another, and no value can be read back from it. Null for a server
     * shared publicly ({@code share: public}).
     *
     * @param key keys the digest (HMAC-SHA256) so that only holders of the key can test a guess
     *     against it; null or empty for a plain SHA-256
     */
    String identity(byte[] key);
}
