package dev.execache.cli;

import jakarta.inject.Inject;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

@Command(name = "execache",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        description = "Runs agent code (TypeScript/JavaScript) in a locked-down Deno sandbox and caches the results:"
                + " the same code, context and tool versions are never run twice.",
        subcommands = {RunCommand.class, StatsCommand.class, ListCommand.class, InspectCommand.class,
            PruneCommand.class, InvalidateCommand.class, ClearCommand.class, ServeCommand.class, ToolsCommand.class,
            ConfigCommand.class, DoctorCommand.class, CompletionCommand.class, CommandLine.HelpCommand.class},
        footer = {"", "Exit codes: 0 success, 1 the code failed (inspect: no such entry), 2 usage error, "
                + "3 infrastructure error (Deno missing, store unusable when required)."})
final class ExecacheCommand {
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
}
