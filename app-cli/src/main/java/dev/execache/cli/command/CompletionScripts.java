package dev.execache.cli.command;

import com.google.inject.Guice;
import dev.execache.cli.output.Console;
import dev.execache.cli.session.BaseModule;
import dev.execache.cli.settings.Environment;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The shell completion scripts, made from the same option definitions as {@code --help}. The build
 * writes them into the jars' resources ({@link #RESOURCES}), where the thin client finds them and
 * prints one without starting the commands' JVM: {@code source <(execache completion bash)} in a
 * shell's start-up file costs a JVM start with class-data sharing, not picocli's model of every
 * command (3.7 s on a loaded machine).
 */
public final class CompletionScripts {
    /** The shells there is a script for. */
    public static final List<String> SHELLS = List.of("bash", "zsh", "fish");
    /** Where the scripts are in the jars, as {@code execache.SHELL}; the thin client reads the same place. */
    public static final String RESOURCES = "/dev/execache/cli/client/completion/";

    private CompletionScripts() {
    }

    /** Writes every shell's script into the directory given (the build: the classes' completion resources). */
    public static void main(String[] args) throws IOException {
        Path directory = Files.createDirectories(Path.of(args[0]));
        CommandLine root = new CommandLine(ExecacheCommand.WithEverySubcommand.class,
                new GuiceFactory(Guice.createInjector(new BaseModule(
                        new Environment(Map.of(), Path.of("."), InputStream.nullInputStream()), new Console()))));
        for (String shell : SHELLS) {
            Files.writeString(directory.resolve("execache." + shell), of(shell, root), StandardCharsets.UTF_8);
        }
    }

    /** The script the build wrote, else (running from classes, in a test) made now. */
    static String forShell(String shell, CommandLine root) {
        try (InputStream kept = CompletionScripts.class.getResourceAsStream(RESOURCES + "execache." + shell)) {
            if (kept != null) {
                return new String(kept.readAllBytes(), StandardCharsets.UTF_8);
            }
        } catch (IOException e) {
            // made now instead
        }
        return of(shell, root);
    }

    public static String of(String shell, CommandLine root) {
        // picocli's bash script serves zsh too: under zsh it turns on bashcompinit before it defines anything
        return shell.equals("fish") ? fish(root.getCommandSpec()) : AutoComplete.bash(root.getCommandName(), root);
    }

    /**
     * fish's completions, one {@code complete} line per subcommand and option. picocli makes bash
     * and zsh scripts only (remkop/picocli#1400 asks for fish), and fish's format is a list of
     * lines, so this is a few lines of our own rather than a dependency.
     */
    static String fish(CommandSpec root) {
        String name = root.name();
        StringBuilder script = new StringBuilder("# fish completion for " + name
                + ", made from the same option definitions as --help\n");
        script.append("complete -c ").append(name).append(" -f\n");
        List<String> names = new ArrayList<>(root.subcommands().keySet());
        for (OptionSpec option : root.options()) {
            script.append(option(name, "__fish_use_subcommand", option));
        }
        for (Map.Entry<String, CommandLine> entry : root.subcommands().entrySet()) {
            script.append("complete -c ").append(name).append(" -n __fish_use_subcommand -a ").append(entry.getKey())
                    .append(" -d ").append(quoted(summary(entry.getValue().getCommandSpec().usageMessage().description())))
                    .append('\n');
        }
        for (Map.Entry<String, CommandLine> entry : root.subcommands().entrySet()) {
            CommandSpec command = entry.getValue().getCommandSpec();
            String seen = "'__fish_seen_subcommand_from " + entry.getKey() + "'";
            List<String> values = new ArrayList<>();
            command.positionalParameters().forEach(parameter -> {
                if (parameter.completionCandidates() != null) {
                    parameter.completionCandidates().forEach(values::add);
                }
            });
            if (!values.isEmpty()) {
                script.append("complete -c ").append(name).append(" -n ").append(seen).append(" -a ")
                        .append(quoted(String.join(" ", values))).append('\n');
            } else if (!command.positionalParameters().isEmpty() && !entry.getKey().equals("help")) {
                // a file, or a key that is not worth a file's completion less
                script.append("complete -c ").append(name).append(" -n ").append(seen).append(" -F\n");
            }
            for (OptionSpec option : command.options()) {
                script.append(option(name, seen, option));
            }
            if (entry.getKey().equals("help")) {
                script.append("complete -c ").append(name).append(" -n ").append(seen).append(" -a ")
                        .append(quoted(String.join(" ", names))).append('\n');
            }
        }
        return script.toString();
    }

    private static String option(String name, String condition, OptionSpec option) {
        if (option.hidden()) {
            return "";
        }
        StringBuilder line = new StringBuilder("complete -c ").append(name).append(" -n ").append(condition);
        for (String each : option.names()) {
            if (each.startsWith("--")) {
                line.append(" -l ").append(each.substring(2));
            } else if (each.length() == 2 && each.startsWith("-")) {
                line.append(" -s ").append(each.charAt(1));
            }
        }
        if (option.arity().max() > 0) {
            line.append(" -r");
            List<String> candidates = new ArrayList<>();
            if (option.completionCandidates() != null) {
                option.completionCandidates().forEach(candidates::add);
            }
            if (!candidates.isEmpty()) {
                line.append(" -a ").append(quoted(String.join(" ", candidates)));
            } else if (Path.class.isAssignableFrom(option.type())) {
                line.append(" -F");
            }
        }
        return line.append(" -d ").append(quoted(summary(option.description()))).append('\n').toString();
    }

    /** The first sentence of a description, without picocli's variables: what fish shows beside a candidate. */
    private static String summary(String[] description) {
        if (description.length == 0) {
            return "";
        }
        String first = description[0].replaceAll("\\$\\{[^}]*}", "").replace("%n", " ").strip();
        int end = first.indexOf(". ");
        first = end < 0 ? first : first.substring(0, end);
        first = first.endsWith(".") ? first.substring(0, first.length() - 1) : first;
        return first.length() <= 80 ? first : first.substring(0, 77) + "...";
    }

    private static String quoted(String text) {
        return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'";
    }
}
