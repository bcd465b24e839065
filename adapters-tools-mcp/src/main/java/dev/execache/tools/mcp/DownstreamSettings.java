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

    /**
     * The same server on behalf of a command: a command server inherits its environment and
     * working directory, a url server takes its {@code ${VAR}} values from that environment.
     */
    DownstreamSettings startedFor(Map<String, String> environment, Path workingDir);
}
