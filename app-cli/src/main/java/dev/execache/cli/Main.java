package dev.execache.cli;

import com.google.inject.Guice;
import dev.execache.core.SandboxUnavailableException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.logging.Formatter;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.StreamHandler;
import picocli.CommandLine;

/** The {@code execache} command. */
public final class Main {
    /** Held here because java.util.logging keeps loggers weakly: a collected one forgets its level. */
    private static final Logger EXECACHE_LOGGER = Logger.getLogger("dev.execache");

    private Main() {
    }

    public static void main(String[] args) {
        int exitCode = run(args, System.getenv(), Path.of("").toAbsolutePath(), System.in, System.out, System.err);
        System.exit(exitCode);
    }

    /** Runs one command line and returns its exit code; logs go to {@code err}. */
    static int run(String[] args, Map<String, String> env, Path workingDir, InputStream stdin, PrintStream out, PrintStream err) {
        Console console = new Console();
        configureLogging(err, console);
        Environment environment = new Environment(env, workingDir, stdin);
        CommandLine commandLine = new CommandLine(ExecacheCommand.class,
                new GuiceFactory(Guice.createInjector(new BaseModule(environment, console))));
        commandLine.setOut(new PrintWriter(out, true, StandardCharsets.UTF_8));
        commandLine.setErr(new PrintWriter(err, true, StandardCharsets.UTF_8));
        // @FILE is ours (--context @file), not picocli's argument files.
        commandLine.setExpandAtFiles(false);
        commandLine.setParameterExceptionHandler((e, ignored) -> {
            usage(e.getCommandLine(), e.getMessage());
            return ExitCode.USAGE;
        });
        commandLine.setExecutionExceptionHandler((e, cmd, parseResult) -> {
            PrintWriter errors = cmd.getErr();
            if (e instanceof UsageException) {
                usage(cmd, e.getMessage());
                return ExitCode.USAGE;
            }
            if (e instanceof SandboxUnavailableException) {
                errors.println("execache: " + e.getMessage());
                errors.println("execache: to use a Deno of your own: EXECACHE_DENO=/path/to/deno");
                return ExitCode.INFRASTRUCTURE;
            }
            if (e instanceof InfrastructureException) {
                errors.println("execache: " + e.getMessage());
                return ExitCode.INFRASTRUCTURE;
            }
            errors.println("execache: unexpected failure: " + e);
            e.printStackTrace(errors);
            return ExitCode.INFRASTRUCTURE;
        });
        return commandLine.execute(args);
    }

    /** A usage error is one line: what was wrong, and where the options are described. */
    private static void usage(CommandLine command, String message) {
        command.getErr().println("execache: " + message + " (see '" + command.getCommandSpec().qualifiedName()
                + " --help')");
        command.getErr().flush();
    }

    /** One line per message on stderr; execache's own notes at INFO, libraries' only from WARNING. */
    private static void configureLogging(PrintStream err, Console console) {
        LogManager.getLogManager().reset();
        Logger root = Logger.getLogger("");
        StreamHandler handler = new StreamHandler(err, new Formatter() {
            @Override
            public String format(LogRecord record) {
                String level = record.getLevel().intValue() >= Level.WARNING.intValue() ? "warning: " : "";
                return "execache: " + level + formatMessage(record) + System.lineSeparator();
            }
        }) {
            @Override
            public synchronized void publish(LogRecord record) {
                if (console.quiet() && record.getLevel().intValue() < Level.WARNING.intValue()) {
                    return;
                }
                super.publish(record);
                flush();
            }
        };
        handler.setLevel(Level.ALL);
        root.addHandler(handler);
        root.setLevel(Level.WARNING);
        EXECACHE_LOGGER.setLevel(Level.INFO);
    }
}
