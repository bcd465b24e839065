package dev.execache.cli.command;

import dev.execache.cli.settings.Durations;
import dev.execache.cli.settings.Environment;
import dev.execache.cli.settings.Settings;
import dev.execache.cli.session.GatewayCatalog;
import dev.execache.cli.session.SignInServers;
import dev.execache.tools.mcp.PersonSignIn;
import dev.execache.tools.mcp.SignIns;
import dev.execache.tools.mcp.UrlServerSettings;
import jakarta.inject.Inject;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "login", mixinStandardHelpOptions = true,
        description = {"Signs you in to a url server that acts as you (a code host, a tracker): OAuth's authorization "
                + "code flow with PKCE at the authorization server the server names.",
            "Prints a URL to open in a browser; once you have signed in there, the browser comes back to execache on "
                + "this machine (127.0.0.1) and the sign-in is kept in an owner-only file under $XDG_STATE_HOME/execache/"
                + "sign-ins (~/.local/state/execache/sign-ins). Calls to the server then carry your access token, renewed "
                + "as needed; their answers are yours alone. 'execache logout SERVER' forgets the sign-in.",
            "Exit code 0 when signed in, 2 for a server that is not a url server reached with a sign-in, 3 when the "
                + "sign-in failed (the message says why)."})
final class LoginCommand implements Callable<Integer> {
    private final Environment environment;
    private final Clock clock;

    @Spec
    CommandSpec spec;

    @Parameters(paramLabel = "SERVER", description = "The name of a url server under servers: in the config file.")
    String server;

    @Option(names = "--config", paramLabel = "FILE",
            description = "Config file with servers:. Default (env EXECACHE_CONFIG): the nearest execache.yaml in this "
                    + "directory or a parent, else $XDG_CONFIG_HOME/execache/execache.yaml.")
    Path config;

    @Option(names = "--port", paramLabel = "PORT", description = "The port on 127.0.0.1 the browser comes back to, "
            + "for an authorization server that takes only a registered one. Default: any free port.")
    int port;

    @Option(names = "--wait", paramLabel = "DURATION", defaultValue = "5m",
            description = "How long to wait for the browser to come back. Default: ${DEFAULT-VALUE}.")
    String wait;

    @Inject
    LoginCommand(Environment environment, Clock clock) {
        this.environment = environment;
        this.clock = clock;
    }

    @Override
    public Integer call() throws InterruptedException {
        Settings settings = SignInServers.settings(config, environment);
        UrlServerSettings url = SignInServers.named(settings, environment, server);
        Duration waitFor = Durations.parse(wait, "--wait");
        SignIns signIns = GatewayCatalog.signIns(environment);
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        try {
            SignIns.State state = new PersonSignIn(url, signIns, clock, settings.limits().timeout())
                    .signIn(port, authorization -> {
                        out.println("To sign in to server " + server + ", open this URL in a browser:");
                        out.println();
                        out.println("  " + authorization);
                        out.println();
                        out.println("Waiting for the browser to come back (at most " + Durations.format(waitFor) + ")...");
                        out.flush();
                    }, waitFor);
            out.println("Signed in to server " + server + " as " + state.account() + " (at " + state.issuer() + ").");
            out.flush();
            return ExitCode.OK;
        } catch (PersonSignIn.SignInException e) {
            err.println("execache: " + e.getMessage());
            err.flush();
            return ExitCode.INFRASTRUCTURE;
        }
    }
}
