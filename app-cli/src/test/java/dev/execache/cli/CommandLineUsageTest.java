package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.cli.command.CompletionCommand;
import dev.execache.cli.command.ExecacheCommand;
import dev.execache.cli.command.ExitCode;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.logging.Logger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Usage errors exit 2 with a message naming the problem, before anything runs or is stored. */
class CommandLineUsageTest {
    @TempDir
    Path dir;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    @BeforeEach
    void writeCode() throws IOException {
        Files.writeString(dir.resolve("ok.ts"), "return 1;");
    }

    private int run(String... args) {
        return Main.run(args, Map.of("XDG_CACHE_HOME", dir.resolve("cache").toString()), dir,
                new ByteArrayInputStream(new byte[0]),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private String errors() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void theSubcommandsFoundByNameAreTheOnesHelpShows() {
        Set<Class<?>> shown = new HashSet<>();
        for (Class<?> command : ExecacheCommand.WithEverySubcommand.class
                .getAnnotation(picocli.CommandLine.Command.class).subcommands()) {
            shown.add(command);
        }
        shown.remove(picocli.CommandLine.HelpCommand.class);
        shown.remove(CompletionCommand.class);

        assertThat(new HashSet<>(ExecacheCommand.SUBCOMMANDS.values())).isEqualTo(shown);
        Map<String, Class<?>> byAnnotation = new HashMap<>();
        for (Class<?> command : shown) {
            picocli.CommandLine.Command annotation = command.getAnnotation(picocli.CommandLine.Command.class);
            byAnnotation.put(annotation.name(), command);
            for (String alias : annotation.aliases()) {
                byAnnotation.put(alias, command);
            }
        }
        assertThat(ExecacheCommand.SUBCOMMANDS).isEqualTo(byAnnotation);
        assertThat(ExecacheCommand.SUBCOMMANDS).containsKeys("run", "list", "ls", "server");
        assertThat(ExecacheCommand.SUBCOMMANDS.get(null)).isNull();
    }

    @Test
    void completionAndHelpKnowEveryCommand() {
        assertThat(run("completion", "bash")).isEqualTo(ExitCode.OK);
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("inspect").contains("--older-than").contains("server");
        out.reset();
        assertThat(run("help")).isEqualTo(ExitCode.OK);
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("inspect").contains("prune").contains("server");
    }

    @Test
    void anOptionBeforeTheSubcommandNameStillAppliesToIt() {
        assertThat(run("-q", "run", "ok.ts", "--store", "memory")).isEqualTo(ExitCode.OK);
        assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("1\n");
        assertThat(errors()).doesNotContain("cache miss");
    }

    @Test
    void missingFile() {
        assertThat(run("run", "missing.ts")).isEqualTo(ExitCode.USAGE);
        assertThat(errors()).contains("FILE: missing.ts does not exist");
    }

    @Test
    void invalidContextJson() {
        assertThat(run("run", "ok.ts", "--context", "{\"a\":")).isEqualTo(ExitCode.USAGE);
        assertThat(errors()).contains("--context: not valid JSON at line 1");

        assertThat(run("run", "ok.ts", "--context", "{\"db\": {\"password\": SECRET_unquoted}}")).isEqualTo(ExitCode.USAGE);
        assertThat(errors()).as("in words, never the parser's, which quote the text")
                .contains("--context: not valid JSON at line 1, column 36: a word that is not a value here (text needs"
                        + " quotes) (under db.password)")
                .doesNotContain("SECRET").doesNotContain("Unrecognized token");
    }

    @Test
    void duplicateKeyInContext() {
        assertThat(run("run", "ok.ts", "--context", "{\"a\":1,\"a\":2}")).isEqualTo(ExitCode.USAGE);
        assertThat(errors()).contains("--context: not valid JSON").contains("a key given twice (under a)");
    }

    @Test
    void contextFromAFileIsNotMistakenForAnArgumentFile() throws IOException {
        Files.writeString(dir.resolve("ctx.json"), "{\"a\": 1}");

        int exit = run("run", "ok.ts", "--context", "@ctx.json", "--tool", "");

        assertThat(errors()).doesNotContain("Unmatched argument").contains("--tool: the tool name must not be blank");
        assertThat(exit).isEqualTo(ExitCode.USAGE);
    }

    @Test
    void missingContextFile() {
        assertThat(run("run", "ok.ts", "--context", "@nope.json")).isEqualTo(ExitCode.USAGE);
        assertThat(errors()).contains("--context @FILE: nope.json does not exist");
    }

    @Test
    void unknownStore() {
        assertThat(run("run", "ok.ts", "--store", "mongo")).isEqualTo(ExitCode.USAGE);
        assertThat(errors()).contains("--store: unknown store 'mongo' (choose one of memory, sqlite, redis)");
    }

    @Test
    void badTtl() {
        assertThat(run("run", "ok.ts", "--ttl", "forever")).isEqualTo(ExitCode.USAGE);
        assertThat(errors()).contains("--ttl: 'forever' is not a duration");
    }

    @Test
    void unknownConfigKey() throws IOException {
        Files.writeString(dir.resolve("execache.yaml"), "code_execution:\n  cache:\n    max_entires: 5\n");

        assertThat(run("run", "ok.ts")).isEqualTo(ExitCode.USAGE);
        assertThat(errors()).contains("unknown key 'code_execution.cache.max_entires'");
    }

    @Test
    void unknownFlag() {
        assertThat(run("run", "ok.ts", "--colour")).isEqualTo(ExitCode.USAGE);
        assertThat(errors()).contains("unknown option '--colour'").contains("(see 'execache run --help')");
        assertThat(out.toString(StandardCharsets.UTF_8)).as("no wall of help for one typo").isEmpty();
    }

    @Test
    void aMistypedCommandOrOptionIsAnsweredWithTheNearestNames() {
        assertThat(run("srve")).isEqualTo(ExitCode.USAGE);
        assertThat(errors()).isEqualTo("execache: unknown command 'srve'; did you mean serve or server? (see 'execache --help')\n");
        err.reset();
        assertThat(run("run", "ok.ts", "--tiemout", "5s")).isEqualTo(ExitCode.USAGE);
        assertThat(errors()).contains("unknown option '--tiemout'; did you mean --timeout?")
                .contains("(see 'execache run --help')");
        err.reset();
        assertThat(run("rnu", "ok.ts")).isEqualTo(ExitCode.USAGE);
        assertThat(errors()).startsWith("execache: unknown command 'rnu'; did you mean run?");
        err.reset();
        assertThat(run("run", "ok.ts", "--tiemuot", "5s")).isEqualTo(ExitCode.USAGE);
        assertThat(errors()).contains("unknown option '--tiemuot'; did you mean --timeout?");
        err.reset();
        assertThat(run("xyzzy")).isEqualTo(ExitCode.USAGE);
        assertThat(errors()).startsWith("execache: unknown command 'xyzzy' (see").doesNotContain("did you mean");
        err.reset();
        assertThat(run("server", "stauts")).isEqualTo(ExitCode.USAGE);
        assertThat(errors()).isEqualTo("execache: unknown action 'stauts'; did you mean status? (choose status, stop or"
                + " start) (see 'execache server --help')\n");
    }

    @Test
    void invalidateNeedsATool() {
        assertThat(run("invalidate")).isEqualTo(ExitCode.USAGE);
        assertThat(errors()).isEqualTo("execache: 'execache invalidate' needs --tool=NAME (the tool whose results to"
                + " remove) (see 'execache invalidate --help')\n");
    }

    @Test
    void whatACommandNeedsAndAnOptionTakesIsSaidInPlainWords() {
        assertThat(run("run")).isEqualTo(ExitCode.USAGE);
        assertThat(errors()).startsWith("execache: 'execache run' needs FILE|- (the code: a .ts or .js file, or - to"
                + " read standard input)");
        err.reset();
        assertThat(run("inspect")).isEqualTo(ExitCode.USAGE);
        assertThat(errors()).startsWith("execache: 'execache inspect' needs one of KEY, --file=FILE,"
                + " --tool-call=SERVER__TOOL");
        err.reset();
        assertThat(run("run", "ok.ts", "--memory-mb", "lots")).isEqualTo(ExitCode.USAGE);
        assertThat(errors()).isEqualTo("execache: --memory-mb takes a whole number, not 'lots'"
                + " (see 'execache run --help')\n");
        err.reset();
        assertThat(run("help", "srve")).isEqualTo(ExitCode.USAGE);
        assertThat(errors()).isEqualTo("execache: unknown command 'srve'; did you mean serve? (see 'execache --help')\n");
    }

    /** picocli's own phrases for a usage error never reach a person. */
    @Test
    void noUsageErrorIsInPicocliWords() {
        String[][] mistakes = {{"run"}, {"inspect"}, {"invalidate"}, {"help", "srve"}, {"help", "xyzzy"},
            {"run", "ok.ts", "--memory-mb", "lots"}, {"run", "ok.ts", "--timeout"}, {"prune", "--older-than"},
            {"stats", "--format"}, {"serve", "--http"}, {"run", "ok.ts", "extra"}};
        for (String[] mistake : mistakes) {
            err.reset();

            assertThat(run(mistake)).as(String.join(" ", mistake)).isEqualTo(ExitCode.USAGE);

            assertThat(errors()).as(String.join(" ", mistake)).startsWith("execache: ")
                    .doesNotContain("Missing required", "Invalid value for", "Unknown subcommand", "is not an int",
                            "Error:", "Unmatched argument", "specify one of these", "Expected parameter");
        }
    }

    @Test
    void nothingIsWrittenOnAUsageError() {
        run("run", "ok.ts", "--context", "[1,");

        assertThat(dir.resolve("cache")).doesNotExist();
    }

    @Test
    void helpExplainsEveryOptionWithItsDefault() {
        assertThat(run("run", "--help")).isEqualTo(ExitCode.OK);
        String help = out.toString(StandardCharsets.UTF_8).replaceAll("\\s+", " ");

        assertThat(help).contains("--store=memory|sqlite|redis").contains("Default: sqlite")
                .contains("--ttl=DURATION").contains("Default: 5m")
                .contains("--timeout=DURATION").contains("Default: 30s");
    }

    @Test
    void librariesLogThroughSlf4jInExecachesOneFormat() {
        run("--version");

        org.slf4j.LoggerFactory.getLogger("io.modelcontextprotocol.client.McpAsyncClient").warn("server went away");

        assertThat(errors()).isEqualTo("execache: warning: server went away\n");
    }

    @Test
    void quietLeavesWarningsButDropsNotes() {
        run("-q", "--version");

        Logger.getLogger("dev.execache.cli").info("a note");
        Logger.getLogger("dev.execache.cli").warning("a warning");

        assertThat(errors()).isEqualTo("execache: warning: a warning\n");
    }

    @Test
    void usageErrorsAreOneLine() {
        assertThat(run("run", "ok.ts", "--context", "\"text\"")).isEqualTo(ExitCode.USAGE);
        assertThat(errors()).isEqualTo("execache: --context: must be a JSON object such as {\"limit\": 10}, not a string"
                + " (see 'execache run --help')\n");
    }

    @Test
    void helpNamesACommand() {
        assertThat(run("help", "prune")).isEqualTo(ExitCode.OK);
        assertThat(out.toString(StandardCharsets.UTF_8)).startsWith("Usage: execache prune").contains("--older-than");
    }
}
