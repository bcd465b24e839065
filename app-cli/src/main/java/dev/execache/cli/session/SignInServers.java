package dev.execache.cli.session;

import dev.execache.cli.settings.Environment;
import dev.execache.cli.settings.GatewayConfig;
import dev.execache.cli.settings.Settings;
import dev.execache.cli.settings.UsageException;
import dev.execache.tools.mcp.SignIns;
import dev.execache.tools.mcp.UrlServerSettings;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** The url servers a person signs in to, found by name in the config file, and their sign-ins as may be shown. */
public final class SignInServers {
    private SignInServers() {
    }

    public static Settings settings(Path config, Environment environment) {
        Settings.Flags flags = new Settings.Flags(config, "memory", null, null, false, null, null, null, null, null,
                List.of(), List.of(), null);
        return Settings.resolve(flags, environment.variables(), environment.workingDir());
    }

    /** The url server named {@code name}, reached with a person's sign-in; a usage error otherwise. */
    public static UrlServerSettings named(Settings settings, Environment environment, String name) {
        List<UrlServerSettings> urlServers = urlServers(settings, environment);
        for (GatewayConfig.Server server : settings.gateway().servers()) {
            if (server.settings().name().equals(name)) {
                if (!(server.settings() instanceof UrlServerSettings url)) {
                    throw new UsageException("server " + name + " is a command, not a url server: it has no sign-in");
                }
                if (!url.signsIn()) {
                    throw new UsageException("server " + name + " is reached with credentials of its own (its headers'"
                            + " Authorization or oauth.client_secret), not with a person's sign-in");
                }
                return url.startedFor(environment.variables(), environment.workingDir());
            }
        }
        throw new UsageException("no server " + name + " under servers: in the config file" + (urlServers.isEmpty()
                ? "" : "; its url servers: " + urlServers.stream().map(UrlServerSettings::name).collect(Collectors.joining(", "))));
    }

    /** The url servers reached with a person's sign-in, in config order. */
    public static List<UrlServerSettings> urlServers(Settings settings, Environment environment) {
        return settings.gateway().servers().stream().map(GatewayConfig.Server::settings)
                .filter(server -> server instanceof UrlServerSettings url && url.signsIn())
                .map(server -> ((UrlServerSettings) server).startedFor(environment.variables(), environment.workingDir()))
                .toList();
    }

    /** Each such server's sign-in state, in words without any secret: signed in as whom, where and since when, or not. */
    public static Map<String, String> states(Settings settings, Environment environment) {
        SignIns signIns = GatewayCatalog.signIns(environment);
        Map<String, String> states = new LinkedHashMap<>();
        for (UrlServerSettings server : urlServers(settings, environment)) {
            states.put(server.name(), describe(server, signIns.state(server.url())));
        }
        return states;
    }

    public static String describe(UrlServerSettings server, SignIns.State state) {
        return state == null ? "not signed in (if it asks for a sign-in: execache login " + server.name() + ")"
                : "signed in as " + state.account() + " at " + state.issuer() + " since "
                        + DateTimeFormatter.ISO_LOCAL_DATE_TIME.format(state.signedInAt().truncatedTo(ChronoUnit.SECONDS)
                                .atOffset(ZoneOffset.UTC)) + "Z";
    }
}
