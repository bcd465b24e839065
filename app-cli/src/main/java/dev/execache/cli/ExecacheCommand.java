package dev.execache.cli;

import picocli.CommandLine.Command;

@Command(name = "execache",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        description = "Runs agent code (TypeScript/JavaScript) in a locked-down Deno sandbox and caches the results:"
                + " the same code, context and tool versions are never run twice.",
        subcommands = {RunCommand.class, StatsCommand.class, InvalidateCommand.class, ClearCommand.class,
            InspectCommand.class, ServeCommand.class, ToolsCommand.class},
        footer = {"", "Exit codes: 0 success, 1 the code failed, 2 usage error, 3 infrastructure error "
                + "(Deno missing, store unusable when required)."})
final class ExecacheCommand {
}
