package dev.execache.cli.command;

import dev.execache.cli.client.ServerControl;
import dev.execache.cli.client.ServerDirectory;
import dev.execache.cli.settings.Environment;
import dev.execache.cli.output.NearestNames;
import dev.execache.cli.settings.UsageException;
import jakarta.inject.Inject;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "server",
        mixinStandardHelpOptions = true,
        description = {"The resident server that makes run, stats, list, inspect, clear, invalidate and prune fast.",
            "It starts on first use, stops after 10 minutes without commands "
                + "(EXECACHE_SERVER_IDLE=DURATION), and is reached over a socket only you can open, in "
                + "$XDG_RUNTIME_DIR/execache (else the cache directory). --no-daemon or EXECACHE_NO_DAEMON=1 "
                + "runs a command in its own process instead."},
        footer = {"", "Exit codes: 0 done, 1 status: no server is running, 3 the server cannot be used."})
final class ServerCommand implements Callable<Integer> {
    private final Environment environment;

    @Spec
    CommandSpec spec;

    // a text, not an enum: picocli's words for a value not among an enum's ("positional parameter at index 0") are
    // its own, where a mistyped action is said as a mistyped command is
    @Parameters(index = "0", paramLabel = "ACTION", completionCandidates = Actions.class,
            description = "status (pid, uptime, version, stores, pool, counters), stop (after the commands it runs), or "
                    + "start (if none is running, and wait until it answers).")
    String action;

    static final class Actions implements Iterable<String> {
        private static final List<String> NAMES = List.of("status", "stop", "start");

        @Override
        public Iterator<String> iterator() {
            return NAMES.iterator();
        }
    }

    @Inject
    ServerCommand(Environment environment) {
        this.environment = environment;
    }

    @Override
    public Integer call() throws IOException, InterruptedException {
        ServerDirectory directory = ServerDirectory.of(environment.variables());
        PrintStream out = new PrintStream(new WriterStream(spec), true, StandardCharsets.UTF_8);
        PrintStream err = new PrintStream(new WriterStream(spec.commandLine().getErr()), true, StandardCharsets.UTF_8);
        return switch (action) {
            case "status" -> ServerControl.status(directory, out);
            case "stop" -> ServerControl.stop(directory, out);
            case "start" -> ServerControl.start(directory, environment.variables(), out, err);
            default -> throw new UsageException("unknown action '" + action + "'" + nearest(action)
                    + " (choose status, stop or start)");
        };
    }

    /** {@code ; did you mean status?}: the nearest actions, one or two letters off (swapped, missing, extra, wrong). */
    private static String nearest(String given) {
        return NearestNames.didYouMean(NearestNames.of(given, Actions.NAMES));
    }

    /** picocli's writers as the byte streams the JDK-only server control writes to. */
    private static final class WriterStream extends OutputStream {
        private final PrintWriter writer;
        private final ByteArrayOutputStream pending = new ByteArrayOutputStream();

        WriterStream(CommandSpec spec) {
            this(spec.commandLine().getOut());
        }

        WriterStream(PrintWriter writer) {
            this.writer = writer;
        }

        @Override
        public void write(int b) {
            pending.write(b);
        }

        @Override
        public void flush() {
            writer.print(pending.toString(StandardCharsets.UTF_8));
            writer.flush();
            pending.reset();
        }
    }
}
