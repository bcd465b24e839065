package dev.execache.cli.command;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.cli.output.Entries;
import dev.execache.cli.output.Output;
import dev.execache.cli.session.GatewayCatalog;
import dev.execache.cli.session.Session;
import dev.execache.cli.session.SessionFactory;
import dev.execache.cli.settings.Durations;
import dev.execache.cli.settings.Environment;
import dev.execache.cli.settings.Settings;
import dev.execache.cli.settings.UsageException;
import dev.execache.core.CanonicalJson;
import dev.execache.core.ExecutionRequest;
import dev.execache.core.ToolCallKeyGenerator;
import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.CatalogTool;
import dev.execache.core.spi.ToolCatalog;
import dev.execache.gateway.Json;
import dev.execache.gateway.Gateway;
import dev.execache.tools.mcp.McpToolCatalog;
import jakarta.inject.Inject;
import java.io.PrintWriter;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import dev.execache.core.CachedExecutor;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "inspect", mixinStandardHelpOptions = true,
        description = {"Shows one cached result without counting a hit: label, age, TTL left, hits, size, tools.",
            "Name it by KEY (as `run --json` and `list` print it), by --file (with the --context and --tool it "
                    + "runs with) to compute the key, or by --tool-call SERVER__TOOL (with its --args) for a call "
                    + "serve proxies (the servers under servers: are started to learn the tool's version). "
                    + "Exits 1 when there is no such entry."})
final class InspectCommand implements Callable<Integer> {
    private final SessionFactory sessions;
    private final Environment environment;
    private final Clock clock;

    @Spec
    CommandSpec spec;

    @ArgGroup(exclusive = true, multiplicity = "1")
    Target target;

    static final class Target {
        @Parameters(paramLabel = "KEY", description = "A cache key, as `run --json` and `list` print it.")
        String key;

        @Option(names = "--file", paramLabel = "FILE", description = "Code whose entry to show.")
        String file;

        @Option(names = "--tool-call", paramLabel = "SERVER__TOOL",
                description = "A gateway tool whose cached call to show (with --args).")
        String toolCall;
    }

    @Option(names = "--args", paramLabel = "JSON|@FILE|@-",
            description = "With --tool-call: the call's arguments, a JSON object. Default: {}")
    String args;

    @Option(names = "--context", paramLabel = "JSON|@FILE|@-", description = "With --file: the context. Default: {}")
    String context;

    @Option(names = "--tool", paramLabel = "NAME[=VERSION]",
            description = "With --file: a tool the code depends on, as given to run (repeatable).")
    List<String> tools = new ArrayList<>();

    @Option(names = "--json", description = "Print the entry as one JSON object. Default: false.")
    boolean json;

    @Mixin
    CacheOptions cache = new CacheOptions();

    @Inject
    InspectCommand(SessionFactory sessions, Environment environment, Clock clock) {
        this.sessions = sessions;
        this.environment = environment;
        this.clock = clock;
    }

    @Override
    public Integer call() {
        if (target.key != null && (context != null || !tools.isEmpty())) {
            throw new UsageException((context != null ? "--context" : "--tool") + ": only with --file (a KEY already"
                    + " names the entry)");
        }
        if (target.toolCall == null && args != null) {
            throw new UsageException("--args: only with --tool-call");
        }
        if (target.toolCall != null && (context != null || !tools.isEmpty())) {
            throw new UsageException((context != null ? "--context" : "--tool") + ": only with --file (a tool call "
                    + "takes --args)");
        }
        if (target.key != null && target.key.isBlank()) {
            throw new UsageException("KEY: must not be empty");
        }
        Settings.Flags flags = cache.flags().withTools(tools);
        try (Session session = sessions.openForStoreManagement(flags)) {
            String key = target.key != null ? target.key
                    : target.toolCall != null ? toolCallKey(session, session.settings(), session.toolVersions().versions())
                    : keyOf(session, flags);
            Optional<CacheEntry> entry = session.executor().policy().inspect(key);
            PrintWriter out = spec.commandLine().getOut();
            if (entry.isEmpty()) {
                if (json) {
                    ObjectNode node = Json.MAPPER.createObjectNode();
                    node.put("key", key);
                    node.put("cached", false);
                    out.println(Json.write(node));
                } else {
                    spec.commandLine().getErr().println("execache: not cached: " + key);
                }
                out.flush();
                return ExitCode.NOT_FOUND;
            }
            print(out, entry.get(), clock.instant());
            out.flush();
            return ExitCode.OK;
        }
    }

    private String keyOf(Session session, Settings.Flags flags) {
        String code = CommandInput.code(target.file, environment, "--file");
        Object contextValue = CommandInput.context(context, environment);
        // the servers a run of this code would start (see RunCommand): their identities are in its key
        Settings forCode = GatewayCatalog.forCode(session.settings(), code);
        if (!forCode.gateway().isEmpty()) {
            session.buildExecutor(GatewayCatalog.forKeysOnly(forCode, environment));
        }
        try {
            return session.executor().policy().keyFor(new ExecutionRequest(code, contextValue,
                    new LinkedHashSet<>(Settings.declaredTools(flags)), session.settings().limits()));
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage(), e);
        }
    }

    /**
     * The key serve gives this call: the tool's version comes from its server (started for this
     * command, or kept running by the resident server) or else from tools: in the config.
     */
    private String toolCallKey(Session session, Settings settings, Map<String, String> configured) {
        String tool = target.toolCall.strip();
        if (tool.isEmpty()) {
            throw new UsageException("--tool-call: must name a tool as SERVER__TOOL");
        }
        Object arguments = CommandInput.jsonObject(args, "--args", environment);
        String version = configured.get(tool);
        if (!settings.gateway().isEmpty()) {
            try (ToolCatalog catalog = session.gatewayCatalog(environment)) {
                Optional<CatalogTool> found = catalog.tools().stream()
                        .filter(candidate -> candidate.name().equals(tool)).findFirst();
                if (found.isPresent()) {
                    version = found.get().version();
                } else if (version == null) {
                    throw new UsageException("--tool-call: no server offers '" + tool + "' (they offer: "
                            + catalog.tools().stream().map(CatalogTool::name).sorted()
                                    .collect(Collectors.joining(", ")) + ")");
                }
            }
        } else if (version == null) {
            throw new UsageException("--tool-call: '" + tool + "' is not a known tool (no servers: in the config file"
                    + (settings.configPath() == null ? "" : " " + settings.configPath()) + ")");
        }
        return ToolCallKeyGenerator.DEFAULT.key(tool,
                CanonicalJson.write(arguments, "--args"), version);
    }

    private void print(PrintWriter out, CacheEntry entry, Instant now) {
        if (json) {
            ObjectNode node = Entries.json(entry, now);
            node.put("cached", true);
            node.set("result", Json.rawJson(entry.value()));
            node.put("console", entry.console());
            out.println(Json.write(node));
            return;
        }
        Duration age = Duration.between(entry.createdAt(), now);
        Duration ttlLeft = Duration.between(now, entry.expiresAt());
        row(out, "key", entry.key());
        row(out, "label", entry.label().isEmpty() ? "(none)" : entry.label());
        row(out, "stored", entry.createdAt() + " (" + Entries.age(age) + " ago)");
        row(out, "ttl left", Entries.age(ttlLeft) + " (until " + entry.expiresAt() + ")");
        row(out, "hits", Long.toString(entry.hits()));
        row(out, "ran in", Durations.human(entry.executionTime()));
        row(out, "tools", Entries.tools(entry.dependsOnTools()));
        if (!entry.nondeterminism().isEmpty()) {
            row(out, "uses", String.join(", ", new TreeSet<>(entry.nondeterminism()))
                    + " (sources of non-determinism)");
        }
        List<CachedExecutor.TracedCall> trace = CachedExecutor.traceOf(entry);
        for (int i = 0; i < trace.size(); i++) {
            CachedExecutor.TracedCall call = trace.get(i);
            row(out, i == 0 ? "trace" : "", (i + 1) + ". " + call.tool() + " args " + call.argumentsDigest()
                    + " answer " + call.answerDigest());
        }
        row(out, "size", Entries.size(entry.estimatedBytes()));
        String result = entry.value().length() <= 200 ? entry.value() : entry.value().substring(0, 199) + "…";
        row(out, "result", result);
    }

    private static void row(PrintWriter out, String name, String value) {
        out.printf(Locale.ROOT, "%-10s %s%n", name, value);
    }
}
