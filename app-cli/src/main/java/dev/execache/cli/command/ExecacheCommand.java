package dev.execache.cli.command;

import dev.execache.cli.output.Console;
import jakarta.inject.Inject;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

@Command(name = "execache",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        description = "Runs agent code (TypeScript/JavaScript) in a locked-down Deno sandbox and caches the results:"
                + " the same code, context and tool versions are never run twice.",
        footer = {"", "Exit codes: 0 success, 1 the code failed (inspect: no such entry), 2 usage error, "
                + "3 infrastructure error (Deno missing, store unusable when required)."})
public class ExecacheCommand {
    /**
     * The subcommands by name. A command line that names one gets a model of that one only:
     * building picocli's model of every command was most of a warm server's time for a cache hit,
     * and picocli builds all subcommands it is given (remkop/picocli#690). Not here: {@code help} and
     * {@code completion}, which describe every command. Written out rather than read from each
     * command's annotation: reading fifteen annotations cost every command line milliseconds before
     * it was parsed (CommandLineUsageTest holds these names to the annotations).
     */
    public static final Map<String, Class<?>> SUBCOMMANDS = subcommands(
            "run", RunCommand.class, "stats", StatsCommand.class, "list", ListCommand.class, "ls", ListCommand.class,
            "inspect", InspectCommand.class, "prune", PruneCommand.class, "invalidate", InvalidateCommand.class,
            "clear", ClearCommand.class, "serve", ServeCommand.class, "tools", ToolsCommand.class,
            "config", ConfigCommand.class, "doctor", DoctorCommand.class, "server", ServerCommand.class,
            "setup", SetupCommand.class, "login", LoginCommand.class, "logout", LogoutCommand.class);

    private final Console console;

    @Inject
    ExecacheCommand(Console console) {
        this.console = console;
    }

    @Option(names = {"-q", "--quiet"}, scope = ScopeType.INHERIT,
            description = "Print no notes of execache's own (the cache line, invalidations); warnings, errors and "
                    + "the code's console output still show. Default: false.")
    void quiet(boolean quiet) {
        console.quiet(quiet);
    }

    /** Read by the thin client before anything is parsed; here so picocli accepts and documents it. */
    @Option(names = "--no-daemon", scope = ScopeType.INHERIT,
            description = "Run this command in its own process, not in the resident server (as EXECACHE_NO_DAEMON=1 "
                    + "does). Default: false.")
    boolean noDaemon;

    /** Name, class, name, class...; a map that answers null for a null name (a command line that names none). */
    private static Map<String, Class<?>> subcommands(Object... namesAndCommands) {
        Map<String, Class<?>> byName = new LinkedHashMap<>();
        for (int i = 0; i < namesAndCommands.length; i += 2) {
            byName.put((String) namesAndCommands[i], (Class<?>) namesAndCommands[i + 1]);
        }
        return Collections.unmodifiableMap(byName);
    }

    /**
     * The command with every subcommand: for help, completion and the man pages, and for any
     * command line that does not start by naming one.
     */
    @Command(subcommands = {RunCommand.class, StatsCommand.class, ListCommand.class, InspectCommand.class,
        PruneCommand.class, InvalidateCommand.class, ClearCommand.class, ServeCommand.class, ToolsCommand.class,
        ConfigCommand.class, DoctorCommand.class, ServerCommand.class, SetupCommand.class, LoginCommand.class,
        LogoutCommand.class, CompletionCommand.class,
        CommandLine.HelpCommand.class})
    public static final class WithEverySubcommand extends ExecacheCommand {
        @Inject
        WithEverySubcommand(Console console) {
            super(console);
        }
    }
}
