package dev.execache.cli.session;

import dev.execache.cli.settings.Environment;
import dev.execache.cli.settings.Settings;
import dev.execache.cli.settings.UsageException;
import dev.execache.core.spi.ToolCatalog;
import dev.execache.tools.mcp.DownstreamSettings;
import dev.execache.tools.mcp.McpToolCatalog;
import dev.execache.tools.mcp.UrlServerSettings;
import java.lang.System.Logger.Level;
import java.time.Clock;
import java.time.Duration;
import java.util.List;

/** The gateway's downstream servers, started for one command. */
public final class GatewayCatalog {
    private GatewayCatalog() {
    }

    /**
     * Starts the configured servers (waiting at most the run timeout for them) and returns their
     * catalog. They inherit the command's environment and working directory, which in a resident
     * server are the typed command's, not the server's.
     *
     * @throws UsageException when a url server's header names an environment variable that is not set
     */
    public static McpToolCatalog start(Settings settings, Environment command) {
        return start(requireVariables(servers(settings, command)), settings);
    }

    /**
     * Starts the configured servers for {@code serve}, which goes on without a url server whose
     * header names a variable that is not set: that server is unavailable, and says why.
     */
    public static McpToolCatalog serve(Settings settings, Environment command) {
        return start(servers(settings, command), settings);
    }

    /**
     * The configured servers as {@code resources} keep them: started for this command, or found
     * running since an earlier command that started the same servers.
     */
    public static ToolCatalog open(Settings settings, Environment command, Resources resources) {
        List<DownstreamSettings> servers = requireVariables(servers(settings, command));
        return resources.catalog(new Identity(servers, settings.limits().timeout(), settings.gateway().rediscoverEvery()),
                () -> start(servers, settings));
    }

    /**
     * What makes two commands' servers the same: equal records, so equal commands, arguments,
     * environment and directory, or equal URLs, headers and the environment their variables come from.
     */
    private record Identity(List<DownstreamSettings> servers, Duration callTimeout, Duration rediscoverEvery) {
    }

    private static List<DownstreamSettings> servers(Settings settings, Environment command) {
        return settings.gateway().servers().stream()
                .map(server -> server.settings().startedFor(command.variables(), command.workingDir())).toList();
    }

    private static List<DownstreamSettings> requireVariables(List<DownstreamSettings> servers) {
        for (DownstreamSettings server : servers) {
            if (server instanceof UrlServerSettings url) {
                try {
                    url.headerValues();
                    url.clientSecret();
                } catch (UrlServerSettings.UnsetVariableException e) {
                    throw new UsageException(e.getMessage());
                }
            }
        }
        return servers;
    }

    private static McpToolCatalog start(List<DownstreamSettings> servers, Settings settings) {
        System.Logger downstream = System.getLogger("dev.execache.downstream");
        return new McpToolCatalog(servers, settings.limits().timeout(), settings.gateway().rediscoverEvery(),
                line -> downstream.log(Level.INFO, line), Clock.systemUTC()).start();
    }
}
