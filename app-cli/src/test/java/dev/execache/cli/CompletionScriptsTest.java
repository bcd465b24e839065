package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.cli.client.ThinClient;
import dev.execache.cli.command.CompletionScripts;
import dev.execache.cli.command.ExecacheCommand;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The completion scripts the build put in the jar: current, and printed by the thin client alone. */
class CompletionScriptsTest {
    private static String kept(String shell) throws IOException {
        try (InputStream in = CompletionScripts.class.getResourceAsStream(CompletionScripts.RESOURCES + "execache." + shell)) {
            assertThat(in).as("the build's " + shell + " script").isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void theScriptsInTheJarAreTheOnesTheCommandsMakeNow() throws IOException {
        CommandLine root = new CommandLine(ExecacheCommand.WithEverySubcommand.class, new DocsFactory());

        for (String shell : CompletionScripts.SHELLS) {
            assertThat(kept(shell)).as(shell).isEqualTo(CompletionScripts.of(shell, root));
        }
    }

    @Test
    void theThinClientPrintsTheScriptWithoutTheCommandsAndLeavesAnUnknownShellToThem() throws IOException {
        PrintStream stdout = System.out;
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        boolean fish;
        boolean tcsh;
        try {
            System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
            fish = ThinClient.printedCompletion(new String[] {"completion", "fish"});
            tcsh = ThinClient.printedCompletion(new String[] {"completion", "tcsh"});
        } finally {
            System.setOut(stdout);
        }

        assertThat(fish).isTrue();
        assertThat(tcsh).isFalse();
        assertThat(printed.toString(StandardCharsets.UTF_8)).isEqualTo(kept("fish"));
    }

    @Test
    void fishCompletesSubcommandsTheirOptionsAndTheValuesAnOptionTakes() throws IOException {
        String fish = kept("fish");

        assertThat(fish).startsWith("# fish completion for execache")
                .contains("complete -c execache -f\n")
                .contains("complete -c execache -n __fish_use_subcommand -a serve -d 'Serves the cache to agents over the")
                .contains("complete -c execache -n '__fish_seen_subcommand_from run' -F\n")
                .contains("complete -c execache -n '__fish_seen_subcommand_from serve' -l config -r -F -d ")
                .contains("complete -c execache -n '__fish_seen_subcommand_from server' -a 'status stop start'\n")
                .doesNotContain("${");
    }
}
