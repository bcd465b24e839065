package dev.execache.cli.session;

import dev.execache.cli.settings.Environment;
import dev.execache.cli.settings.GatewayConfig;
import dev.execache.cli.settings.Settings;
import dev.execache.cli.settings.UsageException;
import dev.execache.core.spi.CodeTools;
import dev.execache.core.spi.ToolCatalog;
import dev.execache.tools.mcp.DownstreamSettings;
import dev.execache.tools.mcp.McpToolCatalog;
import dev.execache.tools.mcp.SignIns;
import dev.execache.tools.mcp.UrlServerSettings;
import java.lang.System.Logger.Level;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;

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
        return start(requireVariables(servers(settings, command)), settings, serverLog(command, false), signIns(command));
    }

    /** The person's sign-ins to url servers, for the environment of {@code command}. */
    public static SignIns signIns(Environment command) {
        return SignIns.in(Settings.signInDirectory(command.variables()));
    }

    /**
     * Starts the configured servers for {@code serve}, in the background: serve answers its client
     * at once and offers each server's tools as it comes up. It goes on without a url server whose
     * header names a variable that is not set: that server is unavailable, and says why.
     */
    public static McpToolCatalog serve(Settings settings, Environment command) {
        List<DownstreamSettings> servers = servers(settings, command);
        Early early = claimEarly();
        if (early != null) {
            if (early.identity().equals(serveIdentity(servers, settings, command))) {
                return early.catalog();
            }
            early.catalog().close();
        }
        // serve's stderr is the host's log of it: the servers' lines go there, each with its server's name
        return catalog(servers, settings, toLog(), signIns(command)).startInBackground();
    }

    /** serve's servers started before its command line was read in full, and what they were started as. */
    private record Early(Identity identity, McpToolCatalog catalog) {
    }

    private static final AtomicReference<CompletableFuture<Early>> EARLY = new AtomicReference<>();

    /**
     * Starts serve's servers as {@link #serve} would, on a thread of its own, before serve has read its command line
     * in full: the servers' own start then runs beside the rest of serve's. {@link #serve} takes them when it is
     * asked for the same servers, and closes them otherwise; {@link #closeUnclaimed} closes them when serve never
     * asked. {@code settings} is called on that thread; its failure starts nothing, and serve says it when it gets there.
     */
    public static void serveEarly(Supplier<Settings> settings, Environment command) {
        CompletableFuture<Early> early = new CompletableFuture<>();
        if (!EARLY.compareAndSet(null, early)) {
            return;
        }
        Thread thread = new Thread(() -> {
            try {
                Settings resolved = settings.get();
                List<DownstreamSettings> servers = servers(resolved, command);
                early.complete(servers.isEmpty() ? null : new Early(serveIdentity(servers, resolved, command),
                        catalog(servers, resolved, toLog(), signIns(command)).startInBackground()));
            } catch (RuntimeException e) {
                early.complete(null);
            }
        }, "execache-early-servers");
        thread.setDaemon(true);
        thread.start();
    }

    /** Closes the servers {@link #serveEarly} started when serve did not take them (it ended before it got there). */
    public static void closeUnclaimed() {
        Early early = claimEarly();
        if (early != null) {
            early.catalog().close();
        }
    }

    private static Early claimEarly() {
        CompletableFuture<Early> early = EARLY.getAndSet(null);
        return early == null ? null : early.join();
    }

    private static Identity serveIdentity(List<DownstreamSettings> servers, Settings settings, Environment command) {
        return new Identity(servers, fingerprint(identityKey(settings)), settings.limits().timeout(),
                settings.gateway().rediscoverEvery(), true, Settings.signInDirectory(command.variables()));
    }

    /**
     * The configured servers as {@code resources} keep them: started for this command, or found
     * running since an earlier command that started the same servers. Their stderr goes to the
     * servers' log ({@link Settings#serverLog}), or to this command's stderr when {@code logsHere}.
     */
    public static ToolCatalog open(Settings settings, Environment command, Resources resources, boolean logsHere) {
        List<DownstreamSettings> servers = requireVariables(servers(settings, command));
        return resources.catalog(new Identity(servers, fingerprint(identityKey(settings)),
                        settings.limits().timeout(), settings.gateway().rediscoverEvery(), logsHere,
                        Settings.signInDirectory(command.variables())),
                () -> start(servers, settings, serverLog(command, logsHere), signIns(command)));
    }

    /**
     * The settings of a run of {@code code}: with only the servers it names (see {@link NamedServers}), all of
     * them when its text does not show which.
     */
    public static Settings forCode(Settings settings, String code) {
        return NamedServers.in(code).map(settings::withServers).orElse(settings);
    }

    /**
     * What makes two commands' servers the same: equal records, so equal commands, arguments,
     * environment and directory, or equal URLs, headers and the environment their variables come
     * from; the same fleet key (by a digest of it: the key is not kept here); and the same person's
     * sign-ins.
     */
    private record Identity(List<DownstreamSettings> servers, String identityKey, Duration callTimeout,
            Duration rediscoverEvery, boolean logsHere, java.nio.file.Path signIns) {
    }

    private static Consumer<String> serverLog(Environment command, boolean logsHere) {
        return logsHere ? toLog() : new ServerLog(Settings.serverLog(command.variables()), Clock.systemUTC());
    }

    private static Consumer<String> toLog() {
        System.Logger downstream = System.getLogger("dev.execache.downstream");
        return line -> downstream.log(Level.INFO, line);
    }

    private static String fingerprint(byte[] key) {
        if (key == null) {
            return "";
        }
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(key));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform must provide SHA-256", e);
        }
    }

    /**
     * The tools code may call as far as the key of a run needs them, without starting a server:
     * the identities of the servers it may call, made as {@link #start} makes them.
     */
    public static CodeTools forKeysOnly(Settings settings, Environment command) {
        byte[] key = identityKey(settings);
        SignIns signIns = signIns(command);
        Map<String, String> identities = new TreeMap<>();
        for (GatewayConfig.Server server : settings.gateway().servers()) {
            DownstreamSettings started = server.settings().startedFor(command.variables(), command.workingDir());
            SignIns.State signedIn = started instanceof UrlServerSettings url && url.signsIn() ? signIns.state(url.url()) : null;
            String identity = started instanceof UrlServerSettings url
                    ? url.identity(key, signedIn == null ? null : signedIn.account()) : started.identity(key);
            if (server.codeAccess() && identity != null) {
                identities.put(server.settings().name(), identity);
            }
        }
        return CodeTools.unreachable(identities, "no server was started");
    }

    private static final String IDENTITY_KEY_PURPOSE = "server identity";

    /**
     * The key of the servers' identities: derived from the fleet's signing key when there is one
     * (so that the fleet shares, and no one without the key can test a guess against a digest),
     * none otherwise.
     */
    private static byte[] identityKey(Settings settings) {
        return settings.signingKeys().derive(IDENTITY_KEY_PURPOSE);
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

    private static McpToolCatalog start(List<DownstreamSettings> servers, Settings settings, Consumer<String> stderr,
            SignIns signIns) {
        return catalog(servers, settings, stderr, signIns).start();
    }

    private static McpToolCatalog catalog(List<DownstreamSettings> servers, Settings settings, Consumer<String> stderr,
            SignIns signIns) {
        return new McpToolCatalog(servers, identityKey(settings), settings.limits().timeout(),
                settings.gateway().rediscoverEvery(), stderr, Clock.systemUTC(), signIns);
    }
}
