package dev.execache.cli.session;

import dev.execache.cli.settings.Environment;
import dev.execache.cli.settings.Settings;
import dev.execache.tools.mcp.McpToolCatalog;
import java.lang.System.Logger.Level;
import java.time.Clock;

/** The gateway's downstream servers, started for one command. */
public final class GatewayCatalog {
    private GatewayCatalog() {
    }

    /**
     * Starts the configured servers (waiting at most the run timeout for them) and returns their
     * catalog. They inherit the command's environment and working directory, which in a resident
     * server are the typed command's, not the server's.
     */
    public static McpToolCatalog start(Settings settings, Environment command) {
        System.Logger downstream = System.getLogger("dev.execache.downstream");
        return new McpToolCatalog(settings.gateway().servers().stream()
                .map(server -> server.settings().startedFor(command.variables(), command.workingDir())).toList(),
                settings.limits().timeout(), settings.gateway().rediscoverEvery(),
                line -> downstream.log(Level.INFO, line), Clock.systemUTC()).start();
    }
}
