package dev.execache.cli.command;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.cli.output.Output;
import dev.execache.cli.session.GatewayCatalog;
import dev.execache.cli.session.Resources;
import dev.execache.cli.session.SignInServers;
import dev.execache.cli.settings.Environment;
import dev.execache.cli.settings.GatewayConfig;
import dev.execache.cli.settings.Settings;
import dev.execache.cli.settings.UsageException;
import dev.execache.core.spi.CatalogTool;
import dev.execache.core.spi.ToolCatalog;
import dev.execache.gateway.GatewayPolicy;
import dev.execache.gateway.Json;
import dev.execache.gateway.Gateway;
import dev.execache.gateway.ToolCallRules;
import dev.execache.gateway.TypeScriptDeclarations;
import jakarta.inject.Inject;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "tools", mixinStandardHelpOptions = true,
        description = {"Lists the tools of the MCP servers under servers: in the config file, as serve offers them:",
            "server, name (SERVER__TOOL), version digest (short), whether calls are cached and why, TTL.",
            "Waits for every server (each at most its start time; the resident server's running ones answer at once); "
                + "a server that did not come up is listed with the reason, and the exit code is then 3."})
final class ToolsCommand implements Callable<Integer> {
    private final Environment environment;
    private final Resources resources;

    @Spec
    CommandSpec spec;

    @Option(names = "--config", paramLabel = "FILE",
            description = "Config file with servers: and tool_calls:. Default (env EXECACHE_CONFIG): the nearest "
                    + "execache.yaml in this directory or a parent, else $XDG_CONFIG_HOME/execache/execache.yaml "
                    + "(~/.config/execache/execache.yaml).")
    Path config;

    @Option(names = "--json", description = "Print one JSON object per tool, in an array. Default: false.")
    boolean json;

    @Option(names = "--typescript", description = "Print TypeScript declarations of the tools code can call "
            + "(declare const tools: {...}), from their schemas, for `deno check` or an agent. Default: false.")
    boolean typescript;

    @Inject
    ToolsCommand(Environment environment, Resources resources) {
        this.environment = environment;
        this.resources = resources;
    }

    @Override
    public Integer call() throws InterruptedException {
        Settings.Flags flags = new Settings.Flags(config, "memory", null, null, false, null, null, null, null, null,
                List.of(), List.of(), null);
        Settings settings = Settings.resolve(flags, environment.variables(), environment.workingDir());
        PrintWriter out = spec.commandLine().getOut();
        if (settings.gateway().isEmpty()) {
            throw new UsageException("no servers: in the config file"
                    + (settings.configPath() == null ? " (" + settings.sources().get("config") + ")"
                            : " " + settings.configPath()));
        }
        GatewayPolicy gateway = settings.gatewayPolicy();
        ToolCallRules rules = new ToolCallRules(gateway.rules(), settings.policy(), gateway.servers());
        try (ToolCatalog catalog = GatewayCatalog.open(settings, environment, resources, false)) {
            List<ToolCatalog.ServerStatus> servers = awaitEvery(catalog);
            List<CatalogTool> tools = catalog.tools();
            Map<String, CatalogTool> byName = tools.stream().collect(Collectors.toMap(CatalogTool::name,
                    tool -> tool, (first, second) -> first));
            List<ToolCatalog.ServerStatus> notUp = servers.stream()
                    .filter(server -> server.state() != ToolCatalog.ServerStatus.State.UP).toList();
            if (typescript) {
                out.print(TypeScriptDeclarations.of(tools, settings.gateway().servers().stream()
                        .filter(GatewayConfig.Server::codeAccess).map(server -> server.settings().name())
                        .collect(Collectors.toSet())));
            } else if (json) {
                ArrayNode array = Json.MAPPER.createArrayNode();
                for (CatalogTool tool : tools) {
                    ToolCallRules.Decision decision = rules.decide(tool, byName);
                    ObjectNode node = array.addObject();
                    node.put("server", tool.server());
                    node.put("name", tool.name());
                    node.put("version", tool.version());
                    node.put("cached", decision.cached());
                    node.put("why", decision.why());
                    if (decision.ttl() != null) {
                        node.put("ttlSeconds", decision.ttl().toSeconds());
                    }
                }
                out.println(Json.write(array));
            } else {
                List<String[]> rows = new ArrayList<>();
                rows.add(new String[] {"SERVER", "TOOL", "VERSION", "CACHED", "WHY", "TTL"});
                for (CatalogTool tool : tools) {
                    ToolCallRules.Decision decision = rules.decide(tool, byName);
                    rows.add(new String[] {tool.server(), tool.name(), shortDigest(tool.version()),
                        decision.cached() ? "yes" : "no", decision.why(),
                        decision.ttl() == null ? "-" : decision.ttl().toSeconds() + " s"});
                }
                for (ToolCatalog.ServerStatus server : notUp) {
                    rows.add(new String[] {server.name(), "-", "-", "-", whyNotUp(server), "-"});
                }
                print(out, rows);
                Map<String, String> signIns = SignInServers.states(settings, environment);
                if (!signIns.isEmpty()) {
                    List<String[]> signInRows = new ArrayList<>();
                    signInRows.add(new String[] {"SERVER", "SIGN-IN"});
                    signIns.forEach((server, state) -> signInRows.add(new String[] {server, state}));
                    out.println();
                    print(out, signInRows);
                }
            }
            out.flush();
            if (notUp.isEmpty()) {
                return ExitCode.OK;
            }
            PrintWriter err = spec.commandLine().getErr();
            for (ToolCatalog.ServerStatus server : notUp) {
                err.println("execache: server " + server.name() + " " + whyNotUp(server));
            }
            err.flush();
            return ExitCode.INFRASTRUCTURE;
        }
    }

    /**
     * Every server's state once none is starting any more: each start is bounded (by the start
     * timeout), and they run at once, so this waits about the slowest one.
     */
    private static List<ToolCatalog.ServerStatus> awaitEvery(ToolCatalog catalog) throws InterruptedException {
        for (ToolCatalog.ServerStatus server : catalog.servers()) {
            if (server.state() == ToolCatalog.ServerStatus.State.STARTING) {
                catalog.awaitStart(server.name());
            }
        }
        return catalog.servers();
    }

    private static String whyNotUp(ToolCatalog.ServerStatus server) {
        return server.state() == ToolCatalog.ServerStatus.State.UNAVAILABLE ? "unavailable: " + server.reason()
                : "did not start in time";
    }

    private static String shortDigest(String version) {
        String hex = version.startsWith("mcp:") ? version.substring(4) : version;
        return hex.length() > 12 ? hex.substring(0, 12) : hex;
    }

    private static void print(PrintWriter out, List<String[]> rows) {
        int[] widths = new int[rows.get(0).length];
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                widths[i] = Math.max(widths[i], row[i].length());
            }
        }
        for (String[] row : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < row.length; i++) {
                line.append(i == row.length - 1 ? row[i] : String.format("%-" + (widths[i] + 2) + "s", row[i]));
            }
            out.println(line.toString().stripTrailing());
        }
    }
}
