package dev.execache.cli;

import dev.execache.cli.command.ExecacheCommand;
import dev.execache.cli.command.ExitCode;
import dev.execache.cli.command.GuiceFactory;
import dev.execache.cli.command.ServeEarly;
import dev.execache.cli.output.Console;
import dev.execache.cli.output.NearestNames;
import dev.execache.cli.session.BaseModule;
import dev.execache.cli.session.GatewayCatalog;
import dev.execache.cli.session.InfrastructureException;
import dev.execache.cli.session.Resources;
import dev.execache.cli.settings.ConfigFile;
import dev.execache.cli.settings.Environment;
import dev.execache.cli.settings.UsageException;
import dev.execache.core.spi.SandboxUnavailableException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/** The {@code execache} command. */
public final class Main {
    /**
     * Held here because java.util.logging keeps loggers weakly: a collected one forgets its level. Set when logging is
     * configured, not when this class loads: java.util.logging's start is tens of milliseconds that serve's early
     * servers (see {@link ServeEarly}) need not wait for.
     */
    private static Logger execacheLogger;

    /** Where a log line goes: the stderr of the command line the logging thread works for. */
    private record LogRoute(PrintStream err, Console console) {
    }

    private static final ThreadLocal<LogRoute> ROUTE = new ThreadLocal<>();
    /** picocli's help command's words for a name it does not know. */
    private static final Pattern UNKNOWN_HELP_SUBJECT = Pattern.compile("Unknown subcommand '(.*)'\\.");
    /** For lines logged by threads of no command line: the latest one-shot command line's stderr. */
    private static volatile LogRoute defaultRoute = new LogRoute(System.err, new Console());
    private static boolean loggingConfigured;
    /** Whether this process's serve reads its config file on a thread of its own already (see {@link ServeEarly}). */
    private static volatile boolean serversStartedEarly;

    static {
        // before anything of this process sends HTTP: serve's early start, a command, the resident server's commands
        resendOnClosedConnections();
    }

    private Main() {
    }

    public static void main(String[] args) {
        Console console = new Console();
        Environment environment = new Environment(System.getenv(), Path.of("").toAbsolutePath(), System.in);
        HeldOutput held = new HeldOutput(System.err);
        serversStartedEarly = ServeEarly.begin(args, environment, Main::configureLogging, held::release);
        if (serversStartedEarly) {
            // serve's servers start now, and may log before serve's first line (the config file it read) is said
            defaultRoute = new LogRoute(new PrintStream(held, true, StandardCharsets.UTF_8), console);
        } else {
            defaultRoute = new LogRoute(System.err, console);
        }
        int exitCode;
        try {
            exitCode = execute(args, environment, console, System.out, System.err, System.console() != null,
                    Resources.PER_COMMAND);
        } finally {
            GatewayCatalog.closeUnclaimed();
            held.release();
        }
        System.exit(exitCode);
    }

    /** What is written to it is held until {@link #release}, then written through. */
    private static final class HeldOutput extends OutputStream {
        private final OutputStream to;
        private ByteArrayOutputStream held = new ByteArrayOutputStream();

        HeldOutput(OutputStream to) {
            this.to = to;
        }

        @Override
        public synchronized void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public synchronized void write(byte[] bytes, int offset, int length) throws IOException {
            if (held != null) {
                held.write(bytes, offset, length);
            } else {
                to.write(bytes, offset, length);
            }
        }

        @Override
        public synchronized void flush() throws IOException {
            if (held == null) {
                to.flush();
            }
        }

        synchronized void release() {
            if (held == null) {
                return;
            }
            try {
                held.writeTo(to);
                to.flush();
            } catch (IOException e) {
                // stderr is gone: nothing else to tell it with
            }
            held = null;
        }
    }

    /** Runs one command line and returns its exit code; logs go to {@code err}. */
    static int run(String[] args, Map<String, String> env, Path workingDir, InputStream stdin, PrintStream out, PrintStream err) {
        Console console = new Console();
        defaultRoute = new LogRoute(err, console);
        return execute(args, new Environment(env, workingDir, stdin), console, out, err, false, Resources.PER_COMMAND);
    }

    /**
     * Runs one command line of several that may run in this process at once (the resident
     * server's): everything it reads and writes is in its arguments.
     *
     * @param terminal whether the command line's stdout is a terminal (help is coloured then)
     */
    public static int execute(String[] args, Environment environment, Console console, PrintStream out, PrintStream err,
            boolean terminal, Resources resources) {
        lightenGuice();
        configureLogging();
        console.terminal(terminal);
        ROUTE.set(new LogRoute(err, console));
        try {
            return parseAndRun(args, environment, console, out, err,
                    terminal && !environment.variables().containsKey("NO_COLOR"), resources);
        } finally {
            ROUTE.remove();
        }
    }

    private static int parseAndRun(String[] args, Environment environment, Console console, PrintStream out,
            PrintStream err, boolean colour, Resources resources) {
        GuiceFactory factory = GuiceFactory.buildingBeside(new BaseModule(environment, console, resources));
        String subcommand = subcommandName(args);
        if ("serve".equals(subcommand) && !serversStartedEarly) {
            warmUpConfigParser();
        }
        Class<?> named = ExecacheCommand.SUBCOMMANDS.get(subcommand);
        CommandLine commandLine;
        if (named == null) {
            commandLine = new CommandLine(ExecacheCommand.WithEverySubcommand.class, factory);
        } else {
            commandLine = new CommandLine(ExecacheCommand.class, factory);
            commandLine.addSubcommand(new CommandLine(named, factory));
        }
        commandLine.setColorScheme(CommandLine.Help.defaultColorScheme(
                colour ? CommandLine.Help.Ansi.ON : CommandLine.Help.Ansi.OFF));
        commandLine.setOut(new PrintWriter(out, true, StandardCharsets.UTF_8));
        commandLine.setErr(new PrintWriter(err, true, StandardCharsets.UTF_8));
        // @FILE is ours (--context @file), not picocli's argument files.
        commandLine.setExpandAtFiles(false);
        commandLine.setParameterExceptionHandler((e, ignored) -> {
            usage(e.getCommandLine(), inPlainWords(e));
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

    /** See {@link ConfigFile#warmUp}: started first, it is done by the time serve reads its config file. */
    private static void warmUpConfigParser() {
        Thread thread = new Thread(ConfigFile::warmUp, "execache-config-parser");
        thread.setDaemon(true);
        thread.start();
    }

    /** The first argument that is not one of the top command's options, or null. */
    private static String subcommandName(String[] args) {
        for (String arg : args) {
            if (!arg.startsWith("-")) {
                return arg;
            }
            if (!arg.equals("-q") && !arg.equals("--quiet") && !arg.equals("--no-daemon")) {
                return null;
            }
        }
        return null;
    }

    /**
     * A usage error in plain words rather than picocli's: a mistyped command or option with the nearest names for it
     * ({@code unknown command 'srve'; did you mean serve?}), what a command needs and was not given, what an option
     * takes.
     */
    private static String inPlainWords(CommandLine.ParameterException e) {
        CommandLine.Model.CommandSpec spec = e.getCommandLine().getCommandSpec();
        if (e instanceof CommandLine.MissingParameterException missing && !missing.getMissing().isEmpty()) {
            List<CommandLine.Model.ArgSpec> needed = missing.getMissing();
            if (e.getMessage().startsWith("Missing required parameter for option")) {
                // `--timeout` last, with no value after it
                return shownName(needed.get(0)) + " needs a value (" + needed.get(0).paramLabel() + ")";
            }
            if (needed.size() == 1) {
                String[] description = needed.get(0).description();
                String what = description.length == 0 ? "" : description[0].split("\\.\\s", 2)[0].replaceAll("\\.$", "");
                return "'" + spec.qualifiedName() + "' needs " + shown(needed.get(0))
                        + (what.isEmpty() ? "" : " (" + Character.toLowerCase(what.charAt(0)) + what.substring(1) + ")");
            }
            List<String> names = needed.stream().map(Main::shown).distinct().toList();
            return "'" + spec.qualifiedName() + "' needs " + (e.getMessage().contains("one of") ? "one of " : "")
                    + String.join(", ", names);
        }
        Matcher unknownHelp = UNKNOWN_HELP_SUBJECT.matcher(e.getMessage());
        if (unknownHelp.matches()) {
            // `execache help srve`
            return unknown("command", unknownHelp.group(1), spec.subcommands().keySet());
        }
        if (e.getArgSpec() != null && e.getValue() != null && e.getMessage().startsWith("Invalid value for ")) {
            String kind = kindOf(e.getArgSpec().type());
            if (kind != null) {
                return shownName(e.getArgSpec()) + " takes " + kind + ", not '" + e.getValue() + "'";
            }
        }
        if (!(e instanceof CommandLine.UnmatchedArgumentException unmatched) || unmatched.getUnmatched().isEmpty()) {
            return e.getMessage();
        }
        String first = unmatched.getUnmatched().get(0);
        List<String> suggestions = unmatched.getSuggestions();
        if (suggestions.isEmpty()) {
            // picocli suggests by shared letters and prefixes, so a swap of two letters ('rnu') got nothing
            suggestions = NearestNames.of(first, unmatched.isUnknownOption() ? spec.optionsMap().keySet()
                    : spec.subcommands().keySet());
        }
        // the first only: picocli counts the unknown option's value as unknown too
        String message = unmatched.isUnknownOption() ? "unknown option '" + first + "'"
                : !e.getCommandLine().getSubcommands().isEmpty() ? "unknown command '" + first + "'"
                : "unexpected argument '" + first + "'";
        return message + NearestNames.didYouMean(suggestions);
    }

    private static String unknown(String what, String given, Collection<String> names) {
        return "unknown " + what + " '" + given + "'" + NearestNames.didYouMean(NearestNames.of(given, names));
    }

    /** What an option or argument is shown as in a message: {@code --tool=NAME}, {@code KEY}. */
    private static String shown(CommandLine.Model.ArgSpec arg) {
        return arg instanceof CommandLine.Model.OptionSpec option && option.arity().max() > 0
                ? option.longestName() + "=" + option.paramLabel() : shownName(arg);
    }

    private static String shownName(CommandLine.Model.ArgSpec arg) {
        return arg instanceof CommandLine.Model.OptionSpec option ? option.longestName() : arg.paramLabel();
    }

    /** What a value of a type picocli converts itself is, in words; null for the rest (their converters say it). */
    private static String kindOf(Class<?> type) {
        if (type == int.class || type == Integer.class || type == long.class || type == Long.class
                || type == short.class || type == Short.class) {
            return "a whole number";
        }
        if (type == double.class || type == Double.class || type == float.class || type == Float.class) {
            return "a number";
        }
        if (type == boolean.class || type == Boolean.class) {
            return "true or false";
        }
        return null;
    }

    /** A usage error is one line: what was wrong, and where the options are described. */
    private static void usage(CommandLine command, String message) {
        command.getErr().println("execache: " + message + " (see '" + command.getCommandSpec().qualifiedName()
                + " --help')");
        command.getErr().flush();
    }

    /**
     * Guice without what execache does not use, read once when Guice first loads: no classes generated at run time
     * (nothing here is intercepted; generating them loaded an ASM of Guice's own before serve could answer), and
     * no stack taken of each binding's source (for error messages about modules, which tests catch). Unless the
     * JVM was started with either already set.
     */
    private static void lightenGuice() {
        if (System.getProperty("guice_bytecode_gen_option") == null) {
            System.setProperty("guice_bytecode_gen_option", "DISABLED");
        }
        if (System.getProperty("guice_include_stack_traces") == null) {
            System.setProperty("guice_include_stack_traces", "OFF");
        }
    }

    /**
     * A request sent on a kept-alive connection that its server closed just then (its keep-alive time ran out as the
     * request went: "header parser received no bytes") is sent once more on a new connection, whatever its method.
     * The JDK's HttpClient does so only for GET and HEAD unless told (its MultiExchange.canRetryRequest), and then
     * a tool call, a token request or a refresh to a url server failed now and then (as TNO/knowledge-engine#449
     * saw). No byte of an answer had come: a server that closes an idle connection has not read what came on it.
     * OkHttp resends there by default too. The JDK reads it once, when its HttpClient first sends.
     */
    private static void resendOnClosedConnections() {
        if (System.getProperty("jdk.httpclient.enableAllMethodRetry") == null) {
            System.setProperty("jdk.httpclient.enableAllMethodRetry", "true");
        }
    }

    /** One line per message on stderr; execache's own notes at INFO, libraries' only from WARNING. */
    private static synchronized void configureLogging() {
        if (loggingConfigured) {
            return;
        }
        loggingConfigured = true;
        LogManager.getLogManager().reset();
        Logger root = Logger.getLogger("");
        Formatter format = new Formatter() {
            @Override
            public String format(LogRecord record) {
                String level = record.getLevel().intValue() >= Level.WARNING.intValue() ? "warning: " : "";
                return "execache: " + level + formatMessage(record) + System.lineSeparator();
            }
        };
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                LogRoute route = ROUTE.get() != null ? ROUTE.get() : defaultRoute;
                if (route.console().quiet() && record.getLevel().intValue() < Level.WARNING.intValue()) {
                    return;
                }
                route.err().print(format.format(record));
                route.err().flush();
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        handler.setLevel(Level.ALL);
        root.addHandler(handler);
        root.setLevel(Level.WARNING);
        execacheLogger = Logger.getLogger("dev.execache");
        execacheLogger.setLevel(Level.INFO);
    }
}
