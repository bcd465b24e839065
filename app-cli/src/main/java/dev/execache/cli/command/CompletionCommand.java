package dev.execache.cli.command;

import dev.execache.cli.settings.UsageException;
import java.util.concurrent.Callable;
import picocli.AutoComplete;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "completion", mixinStandardHelpOptions = true,
        description = {"Prints a shell completion script for execache, made from the same option definitions as "
                + "--help.",
            "bash: source <(execache completion bash)   (or save it under ~/.local/share/bash-completion/completions/"
                    + "execache)",
            "zsh:  source <(execache completion zsh)    (the script loads zsh's bash-completion support itself)"})
public final class CompletionCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(paramLabel = "bash|zsh", description = "The shell.")
    String shell;

    @Override
    public Integer call() {
        if (!shell.equals("bash") && !shell.equals("zsh")) {
            throw new UsageException("completion: unknown shell '" + shell + "' (choose bash or zsh)");
        }
        // picocli's script serves both: under zsh it turns on bashcompinit before it defines anything.
        String script = AutoComplete.bash(spec.root().name(), spec.root().commandLine());
        spec.commandLine().getOut().print(script);
        spec.commandLine().getOut().flush();
        return ExitCode.OK;
    }
}
