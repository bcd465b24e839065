package dev.execache.cli.command;

import dev.execache.cli.settings.Environment;
import dev.execache.cli.setup.Setup;
import dev.execache.cli.setup.SetupException;
import jakarta.inject.Inject;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "setup", mixinStandardHelpOptions = true,
        description = {"Brings the MCP servers you configured in your MCP clients behind execache.",
            "Without options: lists the client configuration files found on this machine (Claude Code's ~/.claude.json"
                    + " and ./.mcp.json, Claude Desktop, Cursor, VS Code, Windsurf, Codex, Zed; user and project files)"
                    + " and the servers each lists. Env and header values are never shown.",
            "--apply: moves the servers under servers: in your execache configuration (their env and headers as they"
                    + " were: a secret moves from the client's file to that file, which is readable by you only) and"
                    + " puts one entry in each client in their place: execache serve --config FILE.",
            "Every file changed is backed up first (in $XDG_STATE_HOME/execache/setup); --undo puts every one back"
                    + " byte for byte and removes the files setup created. Servers that need something only their"
                    + " client provides (its $${...} variables or inputs, SSE, a disabled flag) stay where they are."},
        footer = {"", "Examples:", "  execache setup", "  execache setup --apply --dry-run",
            "  execache setup --apply --client cursor --server github", "  execache setup --undo"})
final class SetupCommand implements Callable<Integer> {
    private final Environment environment;

    @Spec
    CommandSpec spec;

    @Option(names = "--apply", description = "Move the servers behind execache and rewrite the clients' files. Default: false.")
    boolean apply;

    @Option(names = "--dry-run", description = "With --apply or --undo: print the change, write nothing. Default: false.")
    boolean dryRun;

    @Option(names = "--undo", description = "Put back every file the latest --apply changed. Default: false.")
    boolean undo;

    @Option(names = "--force", description = "With --undo: put the files back even if they changed since setup wrote"
            + " them (those changes are lost). Default: false.")
    boolean force;

    @Option(names = "--client", paramLabel = "NAME", split = ",",
            description = "Only these clients: claude-code, claude-desktop, cursor, vscode, windsurf, codex, zed. "
                    + "Default: every client.")
    List<String> clients = new ArrayList<>();

    @Option(names = "--server", paramLabel = "NAME", split = ",",
            description = "Only the servers of these names (as the clients name them). Default: every server.")
    List<String> servers = new ArrayList<>();

    @Option(names = "--config", paramLabel = "FILE",
            description = "The execache configuration the servers move into, which the clients' execache entry names."
                    + " Default: $XDG_CONFIG_HOME/execache/execache.yaml (~/.config/execache/execache.yaml).")
    Path config;

    @Option(names = "--execache", paramLabel = "PATH",
            description = "The execache command the clients start. Default: this execache (the launcher it runs from),"
                    + " else execache on the PATH.")
    Path execache;

    @Inject
    SetupCommand(Environment environment) {
        this.environment = environment;
    }

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        try {
            if (undo && apply) {
                throw new SetupException("--undo and --apply go one at a time");
            }
            if (dryRun && !apply && !undo) {
                throw new SetupException("--dry-run goes with --apply or --undo");
            }
            if (force && !undo) {
                throw new SetupException("--force goes with --undo");
            }
            Setup setup = new Setup(environment.variables(), environment.workingDir(), out);
            Setup.Selection selection = new Setup.Selection(clients, servers);
            if (undo) {
                setup.undo(dryRun, force);
            } else if (apply) {
                Path target = config == null ? setup.defaultConfig() : environment.workingDir().resolve(config);
                setup.apply(selection, target, setup.execacheCommand(execache), dryRun);
            } else {
                setup.show(selection);
            }
            out.flush();
            return ExitCode.OK;
        } catch (SetupException e) {
            out.flush();
            err.println("execache: setup: " + e.getMessage());
            err.flush();
            return ExitCode.USAGE;
        } catch (IOException e) {
            out.flush();
            err.println("execache: setup: " + problem(e));
            err.flush();
            return ExitCode.INFRASTRUCTURE;
        }
    }

    /** An I/O failure in words: the JDK's messages for these name only the file. */
    private static String problem(IOException e) {
        if (e instanceof NoSuchFileException missing) {
            return "no such file: " + missing.getFile();
        }
        if (e instanceof AccessDeniedException denied) {
            return "permission denied: " + denied.getFile();
        }
        if (e instanceof FileSystemException failed && failed.getReason() != null) {
            return failed.getFile() + ": " + failed.getReason();
        }
        return e.getMessage();
    }
}
