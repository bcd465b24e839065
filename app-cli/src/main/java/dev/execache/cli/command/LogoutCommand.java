package dev.execache.cli.command;

import dev.execache.cli.settings.Environment;
import dev.execache.cli.settings.Settings;
import dev.execache.cli.session.GatewayCatalog;
import dev.execache.cli.session.SignInServers;
import dev.execache.tools.mcp.UrlServerSettings;
import jakarta.inject.Inject;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "logout", mixinStandardHelpOptions = true,
        description = {"Forgets your sign-in to a url server ('execache login SERVER' made it): its tokens are removed "
                + "from this machine, and calls to the server ask you to sign in again.",
            "Exit code 0 when it was forgotten or there was none, 2 for a server that is not a url server reached with "
                + "a sign-in."})
final class LogoutCommand implements Callable<Integer> {
    private final Environment environment;

    @Spec
    CommandSpec spec;

    @Parameters(paramLabel = "SERVER", description = "The name of a url server under servers: in the config file.")
    String server;

    @Option(names = "--config", paramLabel = "FILE",
            description = "Config file with servers:. Default (env EXECACHE_CONFIG): the nearest execache.yaml in this "
                    + "directory or a parent, else $XDG_CONFIG_HOME/execache/execache.yaml.")
    Path config;

    @Inject
    LogoutCommand(Environment environment) {
        this.environment = environment;
    }

    @Override
    public Integer call() {
        Settings settings = SignInServers.settings(config, environment);
        UrlServerSettings url = SignInServers.named(settings, environment, server);
        boolean had = GatewayCatalog.signIns(environment).forget(url.url());
        PrintWriter out = spec.commandLine().getOut();
        out.println(had ? "Signed out of server " + server + "." : "You were not signed in to server " + server + ".");
        out.flush();
        return ExitCode.OK;
    }
}
