package dev.execache.cli.command;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.cli.output.CacheMBean;
import dev.execache.cli.output.OpenMetrics;
import dev.execache.cli.output.StoreDescription;
import dev.execache.cli.session.GatewayCatalog;
import dev.execache.cli.session.InfrastructureException;
import dev.execache.cli.session.Session;
import dev.execache.cli.session.SessionFactory;
import dev.execache.cli.settings.ConfigFile;
import dev.execache.cli.settings.ConfigWatcher;
import dev.execache.cli.settings.Durations;
import dev.execache.cli.settings.Environment;
import dev.execache.cli.settings.Settings;
import dev.execache.core.MutableToolVersions;
import dev.execache.cli.settings.ServeHttp;
import dev.execache.cli.telemetry.OpenTelemetryReporting;
import dev.execache.core.spi.CodeTools;
import dev.execache.core.spi.Telemetry;
import dev.execache.core.spi.ToolCatalog;
import dev.execache.mcp.server.http.HttpServeSettings;
import dev.execache.gateway.Json;
import dev.execache.mcp.server.http.McpHttpServer;
import dev.execache.mcp.server.stdio.McpStdioServer;
import dev.execache.gateway.Gateway;
import dev.execache.gateway.ServeSettings;
import dev.execache.gateway.ServeTools;
import dev.execache.sandbox.DenoSandboxSettings;
import jakarta.inject.Inject;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.lang.System.Logger.Level;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "serve",
        mixinStandardHelpOptions = true,
        description = {"Serves the cache to agents over the Model Context Protocol (MCP), on stdin and stdout, or with "
                + "--http over Streamable HTTP at http://HOST:PORT/mcp (stateless, both protocol eras).",
            "With --http it also shows the cache's figures: a dashboard at http://HOST:PORT/ and OpenMetrics text at "
                + "/metrics (what stats --format openmetrics prints), fleet-wide on a shared store. The figures open to "
                + "any token of /mcp and to the figures' own tokens (--metrics-token-file, EXECACHE_METRICS_TOKEN).",
            "Tools: execute_code, cache_stats, invalidate_tool, clear_cache. Takes every setting of run.",
            "While it runs, a change to tools: in the config file invalidates the changed tools' results.",
            "Logs go to stderr (and to the client as MCP log messages, at the level it sets). It ends when stdin ends "
                + "(after answering what it has read) or on SIGTERM (calls still running are told the server is "
                + "shutting down).",
            "One answer is at most 9 MiB, which every mainstream client reads; a larger result is an OutputLimitError.",
            "Runs at once are bounded (EXECACHE_MAX_RUNS; default two per core, and no more than half the memory "
                + "holds at --memory-mb each); more wait their turn, and the wait does not count against their timeout.",
            "Run several with --store redis on one Redis and they behave as one cache."})
final class ServeCommand implements Callable<Integer> {
    private static final Duration WATCH_INTERVAL = Duration.ofSeconds(1);
    /** How long past the run timeout the end of input waits for answers still being computed. */
    private static final Duration DRAIN_MARGIN = Duration.ofSeconds(5);
    /** Servers that start beside serve's JVM are mostly up by then on an idle machine, within hosts' start bounds. */
    private static final Duration SERVERS_WAIT = Duration.ofSeconds(5);
    /** At most this long the store, the runners and the MBean wait for serve's first answers (stdio). */
    private static final Duration ANSWERS_FIRST = Duration.ofSeconds(2);
    private static final Instant STARTED = ProcessHandle.current().info().startInstant().orElseGet(Instant::now);

    private final SessionFactory sessions;
    private final Environment environment;

    @Mixin
    RunOptions options = new RunOptions();

    @Option(names = "--http", paramLabel = "[HOST:]PORT",
            description = "Serve MCP over Streamable HTTP at http://HOST:PORT/mcp instead of stdio; HOST defaults to "
                    + "127.0.0.1 (also serve.http in the config file). A host that is not loopback needs a token.")
    String http;

    @Option(names = "--http-token-file", paramLabel = "FILE",
            description = "Bearer tokens that --http asks for, one per line, optionally NAME TOKEN; the file must not be "
                    + "readable by others. Also EXECACHE_HTTP_TOKEN.")
    Path httpTokenFile;

    @Option(names = "--http-allow-host", paramLabel = "NAME",
            description = "A host name that requests' Host and Origin may name besides the loopback ones (repeatable), "
                    + "such as the name a balancer is reached by.")
    List<String> httpAllowHosts = new ArrayList<>();

    @Option(names = "--metrics-token-file", paramLabel = "FILE",
            description = "Bearer tokens that open only the figures (/metrics and the dashboard's data), not /mcp: for a "
                    + "scraper or a person who must not run code. Same format as --http-token-file; the file must not be "
                    + "readable by others. Also EXECACHE_METRICS_TOKEN (never a token on the command line, which others "
                    + "can read in the process list).")
    Path metricsTokenFile;

    @Option(names = "--oauth-issuer", paramLabel = "URL",
            description = "Take OAuth access tokens (JWTs) issued by this authorization server, beside any static token: "
                    + "its issuer URL, exactly as its metadata names it (https; http only on loopback). Clients find it "
                    + "from /.well-known/oauth-protected-resource. Tokens need the scope execache:read (figures, "
                    + "cache_stats, lists), execache:run (execute_code, the gateway's tools, resources and prompts) or "
                    + "execache:admin (clear_cache, invalidate_tool); their sub (else client_id) is the agent in the "
                    + "figures and logs. Also EXECACHE_OAUTH_ISSUER, serve.oauth_issuer. See docs/oauth.md.")
    String oauthIssuer;

    @Option(names = "--oauth-resource", paramLabel = "URL",
            description = "The URL clients reach MCP at, which access tokens must be issued for (their aud, RFC 8707), "
                    + "such as https://mcp.example.org/mcp; default: the URL it serves at, on loopback only (needed "
                    + "behind a balancer or proxy). Also EXECACHE_OAUTH_RESOURCE, serve.oauth_resource.")
    String oauthResource;

    @Option(names = "--expose", paramLabel = "all|code",
            description = "What tools/list holds: every server's tools beside execache's own (all), or execache's own "
                    + "only (code: the servers' tools are found by search_tools, described by describe_tools and called "
                    + "from execute_code, and stay callable by name). Default: all "
                    + "(env EXECACHE_EXPOSE, config expose).")
    String expose;

    @Option(names = "--wait-for-servers", paramLabel = "DURATION",
            description = "How long after serve started an agent's initialize (or server/discover) may wait for the "
                    + "servers under servers: that are still starting, so that their own instructions reach the agent "
                    + "(a host reads them once). Default: 5s; 0 answers at once. Also EXECACHE_WAIT_FOR_SERVERS.")
    String waitForServers;

    @Inject
    ServeCommand(SessionFactory sessions, Environment environment) {
        this.sessions = sessions;
        this.environment = environment;
    }

    @Override
    public Integer call() throws InterruptedException {
        Settings settings = Settings.resolve(options.flags().withExpose(expose), environment.variables(),
                environment.workingDir());
        if (!environment.variables().containsKey("EXECACHE_WARM_POOL")) {
            settings = settings.withWarmPoolSize(DenoSandboxSettings.defaultWarmPoolSize());
        }
        Duration serversWait = serversWait(waitForServers, environment);
        HttpServeSettings httpSettings = ServeHttp.resolve(http, httpTokenFile, httpAllowHosts, metricsTokenFile,
                oauthIssuer, oauthResource, environment.variables(),
                configFile(settings, environment), environment.workingDir(), settings.limits().timeout().plus(DRAIN_MARGIN));
        // first (after a usage error, which is one line alone): a host starts serve in a directory of
        // its choosing, and this says where that looked and which file it found
        Logging.LOG.log(Level.INFO, configFileLine(settings));
        ServeEarly.releaseLogs();
        PrintStream protocol = System.out;
        System.setOut(System.err);
        Serving serving = new Serving();
        Thread shutdownHook = new Thread(serving::close, "execache-serve-shutdown");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
        try {
            Telemetry telemetry = OpenTelemetryReporting.configure(environment.variables());
            if (telemetry instanceof OpenTelemetryReporting reporting) {
                // added before the servers: closed after them, so that their last spans are sent
                serving.add(reporting);
                Logging.LOG.log(Level.INFO, "OpenTelemetry: traces and metrics as the OTEL_* variables say");
            }
            // the servers first, so that they start beside the rest of serve's start rather than after it
            ToolCatalog servers = settings.gateway().isEmpty() ? null
                    : serving.add(GatewayCatalog.serve(settings, environment).useTelemetry(telemetry));
            Session session = serving.add(sessions.openWithStoreLater(settings));
            if (!(session.toolVersions() instanceof MutableToolVersions versions)) {
                throw new IllegalStateException("serve needs tool versions it can change, not "
                        + session.toolVersions().getClass().getName());
            }
            serving.add(new ConfigWatcher(configFile(settings, environment), versions, pinnedTools()).start(WATCH_INTERVAL));
            Gateway gateway = servers == null ? null
                    : Gateway.builder(servers, session.guard(), versions, settings.gatewayPolicy(), settings.policy())
                            .telemetry(telemetry).build();
            session.buildExecutor(gateway == null ? CodeTools.NONE : gateway, telemetry);
            ServeTools tools = ServeTools.builder(session.executor(), serveSettings(settings)).gateway(gateway)
                    .telemetry(telemetry).build();
            tools.awaitServersForInstructionsUntil(STARTED.plus(serversWait));
            if (httpSettings != null) {
                StoreDescription store = StoreDescription.of(settings);
                Settings resolved = settings;
                return serveHttp(serving, tools, httpSettings, settings,
                        () -> OpenMetrics.write(session.executor().policy().stats(), store, session.executor().policy().storeInOutage()),
                        () -> afterStart(serving, resolved, session, tools, () -> { }));
            }
            // System.in itself: its buffer asks the descriptor how much more is waiting (two system calls) after each read
            InputStream stdin = environment.stdin() == System.in ? new FileInputStream(FileDescriptor.in) : environment.stdin();
            McpStdioServer server = serving.add(new McpStdioServer(tools,
                    version(), stdin, protocol, settings.limits().timeout().plus(DRAIN_MARGIN)));
            afterStart(serving, settings, session, tools, () -> server.awaitAnswered(ANSWERS_FIRST));
            Logging.LOG.log(Level.INFO, "serving MCP on stdio (store " + settings.store() + ", "
                    + (settings.policy().enabled() ? "ttl " + settings.policy().ttl().toSeconds() + " s, "
                            + settings.policy().maxEntries() + " entries" : "caching off") + ")");
            server.awaitEnd();
            return ExitCode.OK;
        } finally {
            serving.close();
        }
    }

    /**
     * The settings {@link #call} resolves for {@code serve} with no option but {@code --config} (null: none), checked
     * as far as {@link #call} checks them before it starts the servers; see {@link ServeEarly}.
     */
    static Settings settingsOfEarlyStart(Path config, Environment environment) {
        Settings settings = Settings.resolve(new RunOptions().flags().withConfig(config), environment.variables(),
                environment.workingDir());
        serversWait(null, environment);
        ServeHttp.resolve(null, null, List.of(), null, null, null, environment.variables(),
                configFile(settings, environment), environment.workingDir(), settings.limits().timeout().plus(DRAIN_MARGIN));
        return settings;
    }

    private static int serveHttp(Serving serving, ServeTools tools, HttpServeSettings http, Settings settings,
            Supplier<String> openMetrics, Runnable warmUp) throws InterruptedException {
        McpHttpServer server = new McpHttpServer(tools, version(), http, openMetrics);
        try {
            server.start();
        } catch (IOException e) {
            throw new InfrastructureException(e.getMessage(), e);
        }
        warmUp.run();
        serving.add(server);
        Logging.LOG.log(Level.INFO, "serving MCP on " + server.url() + " (store " + settings.store() + ", "
                + access(http) + ", "
                + (settings.policy().enabled() ? "ttl " + settings.policy().ttl().toSeconds() + " s, "
                        + settings.policy().maxEntries() + " entries" : "caching off") + ")");
        String root = server.url().substring(0, server.url().length() - "mcp".length());
        Logging.LOG.log(Level.INFO, "the dashboard is at " + root + ", the figures for Prometheus at " + root + "metrics");
        server.awaitEnd();
        return ExitCode.OK;
    }

    /** Who is let in, for the line that says where it serves (never a token). */
    private static String access(HttpServeSettings http) {
        String oauth = http.oauth() == null ? "" : "access tokens of " + http.oauth().issuer();
        if (http.tokens().isEmpty()) {
            return oauth.isEmpty() ? "no token asked: loopback only" : oauth;
        }
        return http.tokens().size() + " token(s)" + (oauth.isEmpty() ? "" : " and " + oauth);
    }

    private ServeSettings serveSettings(Settings settings) {
        ObjectNode store = Json.MAPPER.createObjectNode();
        StoreDescription.of(settings).putInto(store);
        return new ServeSettings(settings.limits(), settings.configPath() == null ? ConfigFile.DEFAULT_NAME
                : settings.configPath().toString(), store, settings.expose());
    }

    /** Something to wait for; see {@link #afterStart}. */
    @FunctionalInterface
    private interface Wait {
        void await() throws InterruptedException;
    }

    /**
     * What serve's first answers do not need, each on a thread of its own: the store (a call that comes first opens
     * it), the sandbox's runners, the cache's MBean (the platform's MBean server takes a few hundred classes to
     * start). They begin once the servers are up (or the first answer's wait for them is over) and then once
     * {@code answered}: begun beside the servers' start, or beside the lists an agent asks for next, they took the
     * two cores those needed.
     */
    private static void afterStart(Serving serving, Settings settings, Session session, ServeTools tools,
            Wait answered) {
        Thread thread = new Thread(() -> {
            try {
                tools.awaitServersUntilInstructionsDeadline();
                answered.await();
            } catch (InterruptedException e) {
                return;
            }
            if (serving.isClosed()) {
                return;
            }
            session.openStoreSoon();
            warmUp(session);
            registerMBeanSoon(serving, settings, session);
        }, "execache-after-start");
        thread.setDaemon(true);
        thread.start();
    }

    /** Registers the cache's MBean (for JConsole and JMX exporters) on a thread of its own, off the way to the first answer. */
    private static void registerMBeanSoon(Serving serving, Settings settings, Session session) {
        Thread thread = new Thread(() -> {
            try {
                serving.add(CacheMBean.register(StoreDescription.of(settings), session.executor().policy()::stats));
            } catch (RuntimeException e) {
                Logging.LOG.log(Level.DEBUG, "the cache's MBean was not registered: " + e.getMessage());
            }
        }, "execache-mbean");
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * Starts the sandbox (and its pool of waiting runners) once serve answers: started with the JVM, its Deno
     * processes took the CPU serve's first answer needed.
     */
    private static void warmUp(Session session) {
        Thread thread = new Thread(() -> {
            try {
                session.startSandbox();
            } catch (RuntimeException e) {
                Logging.LOG.log(Level.WARNING, "the sandbox did not start: " + rootMessage(e)
                        + "; execute_code will say so until it can start");
            }
        }, "execache-sandbox-warm-up");
        thread.setDaemon(true);
        thread.start();
    }

    private static String rootMessage(Throwable e) {
        Throwable cause = e;
        while (cause.getCause() != null && !(cause instanceof InfrastructureException)) {
            cause = cause.getCause();
        }
        return cause.getMessage();
    }

    private static Path configFile(Settings settings, Environment environment) {
        return settings.configPath() != null ? settings.configPath()
                : environment.workingDir().resolve(ConfigFile.DEFAULT_NAME);
    }

    /** Names every place looked at and the file used, if any. */
    private static String configFileLine(Settings settings) {
        String looked = settings.sources().getOrDefault("config_search", "");
        return settings.configPath() != null
                ? "config file: " + settings.configPath() + " (" + looked + ")"
                : "no config file (" + looked + "); settings come from flags, environment and defaults";
    }

    private Set<String> pinnedTools() {
        return options.tools.stream().filter(tool -> tool.contains("="))
                .map(tool -> tool.substring(0, tool.indexOf('=')).trim())
                .collect(Collectors.toSet());
    }

    private static String version() {
        try {
            String line = new VersionProvider().getVersion()[0];
            return line.substring(line.indexOf(' ') + 1);
        } catch (IOException e) {
            return "unknown";
        }
    }

    /**
     * The logger, got at its first use rather than when the class is: serve's early start calls this class on the
     * thread that starts the servers, and the JVM's first logger looks for a logging backend on the class path,
     * opening serve's jar of some 20,000 entries (about 25 ms) before the servers could start (see {@link ServeEarly}).
     */
    private static final class Logging {
        static final System.Logger LOG = System.getLogger("dev.execache.cli");
    }

    /**
     * What serve runs, closed once, last opened first: at the end of input or on SIGTERM,
     * whichever comes first. Closing the session closes the sandbox, so no runner is left.
     */
    private static final class Serving {
        private final Deque<AutoCloseable> opened = new ArrayDeque<>();
        private boolean closed;

        synchronized <T extends AutoCloseable> T add(T resource) {
            if (closed) {
                closeQuietly(resource);
                throw new IllegalStateException("execache serve is stopping");
            }
            opened.push(resource);
            return resource;
        }

        synchronized boolean isClosed() {
            return closed;
        }

        synchronized void close() {
            closed = true;
            while (!opened.isEmpty()) {
                closeQuietly(opened.pop());
            }
        }

        private static void closeQuietly(AutoCloseable resource) {
            try {
                resource.close();
            } catch (Exception e) {
                Logging.LOG.log(Level.WARNING, "closing " + resource.getClass().getSimpleName() + " failed: " + e);
            }
        }
    }

    /** How long after serve started initialize may wait for the servers still starting (--wait-for-servers). */
    private static Duration serversWait(String waitForServers, Environment environment) {
        String text = waitForServers != null ? waitForServers : environment.variables().get("EXECACHE_WAIT_FOR_SERVERS");
        if (text == null) {
            return SERVERS_WAIT;
        }
        if (text.trim().matches("0+(ms|s|m|h)?")) {
            return Duration.ZERO;
        }
        return Durations.parse(text, waitForServers != null ? "--wait-for-servers" : "EXECACHE_WAIT_FOR_SERVERS");
    }
}
