package dev.execache.cli.command;

import dev.execache.cli.settings.UsageException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "completion", mixinStandardHelpOptions = true,
        description = {"Prints a shell completion script for execache, made from the same option definitions as "
                + "--help (by the build: printing it starts no more than the thin client).",
            "bash: source <(execache completion bash)   (or once: execache completion bash > "
                    + "~/.local/share/bash-completion/completions/execache)",
            "zsh:  source <(execache completion zsh)    (the script loads zsh's bash-completion support itself)",
            "fish: execache completion fish > ~/.config/fish/completions/execache.fish"})
public final class CompletionCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(paramLabel = "bash|zsh|fish", description = "The shell.")
    String shell;

    @Override
    public Integer call() {
        if (!CompletionScripts.SHELLS.contains(shell)) {
            throw new UsageException("completion: unknown shell '" + shell + "' (choose bash, zsh or fish)");
        }
        spec.commandLine().getOut().print(CompletionScripts.forShell(shell, spec.root().commandLine()));
        spec.commandLine().getOut().flush();
        return ExitCode.OK;
    }
}
