package dev.execache.cli.command;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.cli.output.Console;
import dev.execache.cli.output.Output;
import dev.execache.cli.output.TerminalText;
import dev.execache.cli.session.GatewayCatalog;
import dev.execache.cli.session.Session;
import dev.execache.cli.session.SessionFactory;
import dev.execache.cli.settings.Durations;
import dev.execache.cli.settings.Environment;
import dev.execache.cli.settings.Settings;
import dev.execache.cli.settings.UsageException;
import dev.execache.core.Agents;
import dev.execache.core.CacheStatus;
import dev.execache.core.ExecutionError;
import dev.execache.core.ExecutionOutcome;
import dev.execache.core.ExecutionRequest;
import dev.execache.core.ExecutionResult;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.spi.ToolCatalog;
import dev.execache.gateway.Json;
import dev.execache.gateway.Gateway;
import dev.execache.tools.mcp.McpToolCatalog;
import jakarta.inject.Inject;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "run",
        mixinStandardHelpOptions = true,
        description = {"Runs agent code through the cache.",
            "The code is the body of an async function: `return` gives the result, `context` holds the context.",
            "stdout gets the result as JSON; the code's console output and one line on the cache go to stderr."})
final class RunCommand implements Callable<Integer> {
    private final SessionFactory sessions;
    private final Environment environment;
    private final Console console;

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE|-",
            description = "The code: a .ts or .js file, or - to read standard input. A first line starting with #! "
                    + "is ignored, so a script can start with #!/usr/bin/env -S execache run.")
    String file;

    @Option(names = "--context", paramLabel = "JSON|@FILE",
            description = "The context the code sees as `context`: a JSON object, @FILE to read it from a file, "
                    + "or @- to read it from standard input. Default: {}")
    String context;

    @Option(names = "--json",
            description = "Print the whole outcome as one JSON object (result, cache, key, executionTimeMs, savedMs, "
                    + "console, error) instead of the result alone. Default: false.")
    boolean json;

    @Option(names = "--server-logs",
            description = "Show the stderr of the servers the code calls here, as they write it (the run is then made in "
                    + "this process, not by the resident server). Default: false: it goes to the servers' log, "
                    + "$XDG_STATE_HOME/execache/servers.log (else ~/.local/state/execache/servers.log; "
                    + "`execache doctor` names it).")
    boolean serverLogs;

    @Mixin
    RunOptions options = new RunOptions();

    @Inject
    RunCommand(SessionFactory sessions, Environment environment, Console console) {
        this.sessions = sessions;
        this.environment = environment;
        this.console = console;
    }

    @Override
    public Integer call() {
        Settings settings = Settings.resolve(options.flags(), environment);
        if (file.equals("-") && "@-".equals(context)) {
            throw new UsageException("--context @-: standard input already holds the code (FILE is -); "
                    + "give the context as JSON or @FILE");
        }
        String code = CommandInput.code(file, environment, "FILE");
        Object contextValue = CommandInput.context(context, environment);
        ExecutionRequest request;
        try {
            request = new ExecutionRequest(code, contextValue,
                    new LinkedHashSet<>(Settings.declaredTools(options.flags())), settings.limits())
                    .withLabel(file.equals("-") ? "" : Path.of(file).getFileName().toString())
                    .withAgent(Agents.CLI);
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage(), e);
        }
        // only the servers the code names are started, none for code that calls no tool
        Settings forCode = GatewayCatalog.forCode(settings, code);
        try (Session session = sessions.open(forCode);
                ToolCatalog catalog = codeTools(session, forCode)) {
            ExecutionOutcome outcome;
            try {
                outcome = session.executor().execute(request);
            } catch (IllegalArgumentException e) {
                throw new UsageException(e.getMessage(), e);
            }
            return report(outcome);
        }
    }

    /** With servers in the settings, the code may call their tools: starts them for this run; null without. */
    private ToolCatalog codeTools(Session session, Settings settings) {
        if (settings.gateway().isEmpty()
                || !(session.toolVersions() instanceof MutableToolVersions versions)) {
            return null;
        }
        ToolCatalog catalog = session.gatewayCatalog(environment, serverLogs);
        session.buildExecutor(Gateway.builder(catalog, session.guard(), versions, settings
                .gateway().policy(settings.policy()), settings.policy())
                .build());
        return catalog;
    }

    private int report(ExecutionOutcome outcome) {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        ExecutionResult result = outcome.result();
        if (json) {
            ObjectNode node = Json.MAPPER.createObjectNode();
            node.set("result", result.isSuccess() ? Json.rawJson(result.value()) : null);
            node.put("cache", outcome.status().name().toLowerCase(Locale.ROOT));
            node.put("key", outcome.key());
            node.put("executionTimeMs", Json.millis(result.executionTime()));
            node.put("savedMs", Json.millis(outcome.saved()));
            node.put("console", result.console());
            node.set("error", result.isSuccess() ? null : Json.error(result.error()));
            Json.runDetails(node, outcome);
            out.println(Json.write(node));
        } else {
            // for a person: what the code wrote is shown, never acted on by the terminal
            if (!result.console().isEmpty()) {
                err.print(TerminalText.escape(result.console()));
                if (!result.console().endsWith("\n")) {
                    err.println();
                }
            }
            if (result.isSuccess()) {
                out.println(TerminalText.escapeJson(result.value()));
            } else {
                ExecutionError error = result.error();
                err.println("execache: " + TerminalText.escape(error.toString()));
                if (!error.stack().isEmpty()) {
                    err.println(TerminalText.escape(error.stack()));
                }
            }
            if (!console.quiet()) {
                err.println("execache: " + describe(outcome));
            }
        }
        out.flush();
        err.flush();
        return result.isSuccess() ? ExitCode.OK : ExitCode.CODE_FAILED;
    }

    private static String describe(ExecutionOutcome outcome) {
        String ran = Durations.human(outcome.result().executionTime());
        return switch (outcome.status()) {
            case HIT -> "cache hit, saved " + Durations.human(outcome.saved()) + " (key " + outcome.key() + ")";
            case SHARED -> "cache miss, shared the result of an identical run (" + ran + ")";
            case MISS -> "cache miss, ran in " + ran + (!outcome.result().isSuccess() ? ", not stored (failed)"
                    : outcome.notStoredBecause() != null ? ", not stored: " + outcome.notStoredBecause() : ", stored")
                    + " (key " + outcome.key() + ")" + toolCalls(outcome);
            case BYPASS -> "cache off, ran in " + ran;
            case STORE_ERROR -> "cache store unavailable, ran uncached in " + ran;
            case REVALIDATED -> "cache revalidated: its " + outcome.toolCalls().size() + " tool "
                    + (outcome.toolCalls().size() == 1 ? "call" : "calls") + " answered as before, so its result stands"
                    + " without running, saved " + Durations.human(outcome.saved()) + " (key " + outcome.key() + ")";
        };
    }

    private static String toolCalls(ExecutionOutcome outcome) {
        if (outcome.toolCalls().isEmpty()) {
            return "";
        }
        long hits = outcome.toolCalls().stream().filter(call -> call.status() == CacheStatus.HIT).count();
        return "; " + outcome.toolCalls().size() + " tool " + (outcome.toolCalls().size() == 1 ? "call" : "calls")
                + " (" + hits + " from the tool cache)";
    }
}
