package dev.execache.cli.client;

import java.io.BufferedInputStream;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.InvocationTargetException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The {@code execache} command a person types. The commands that read and run through the
 * cache go to the user's resident server, which is warm; everything else, and every command
 * under {@code --no-daemon} or {@code EXECACHE_NO_DAEMON=1}, runs in this process. Loads JDK
 * classes only: starting Guice, picocli, Jackson and Jdbi is what the server saves.
 */
public final class ThinClient {
    static final Set<String> SERVED = Set.of("run", "stats", "list", "inspect", "clear", "invalidate", "prune", "tools");
    private static final String IN_PROCESS_MAIN = "dev.execache.cli.Main";
    private static final int INFRASTRUCTURE = 3;
    private static final String SELECTOR_PROVIDER = "java.nio.channels.spi.SelectorProvider";

    private final Map<String, String> env;
    private final OutputStream stdout = new FileOutputStream(FileDescriptor.out);
    private final OutputStream stderr = new FileOutputStream(FileDescriptor.err);
    private final CountDownLatch answered = new CountDownLatch(1);
    private volatile boolean finished;

    private ThinClient(Map<String, String> env) {
        this.env = env;
    }

    public static void main(String[] args) throws Throwable {
        if (printedCompletion(args)) {
            return;
        }
        nameTheSelectorProvider();
        Map<String, String> env = System.getenv();
        if (!throughServer(args, env)) {
            inProcess(args);
            return;
        }
        ServerDirectory directory = ServerDirectory.of(env);
        String problem = directory.problem();
        if (problem != null) {
            System.err.println("execache: warning: not using the resident server: " + problem
                    + "; run 'chmod 700 " + directory.path() + "' if it is yours, or remove it");
            inProcess(args);
            return;
        }
        SocketChannel channel = directory.connect();
        if (channel == null) {
            startInBackground(directory, env);
            inProcess(args);
            return;
        }
        int exitCode = new ThinClient(env).talk(channel, args, directory);
        System.exit(exitCode);
    }

    /**
     * {@code execache completion SHELL} prints the script the build made (CompletionScripts, in
     * this jar's resources) without loading the commands: a shell's start-up file runs it for
     * every new shell. False when there is no such script, so the command runs and says why.
     */
    public static boolean printedCompletion(String[] args) throws IOException {
        if (args.length != 2 || !args[0].equals("completion") || !args[1].matches("[a-z]+")) {
            return false;
        }
        try (InputStream script = ThinClient.class.getResourceAsStream("completion/execache." + args[1])) {
            if (script == null) {
                return false;
            }
            script.transferTo(System.out);
            System.out.flush();
            return true;
        }
    }

    /**
     * Names the platform's own selector provider, the one the JDK would choose anyway: unnamed, the
     * JDK first looks for another through a ServiceLoader over the class path, which cost every
     * command about 3 ms before its socket was open (2.4-3 ms of a hit's 48 ms, 21 alternating
     * rounds, #29). Named only where the JDK's class for it is known and present.
     */
    public static void nameTheSelectorProvider() {
        String name = platformSelectorProvider();
        if (name != null && System.getProperty(SELECTOR_PROVIDER) == null) {
            System.setProperty(SELECTOR_PROVIDER, name);
        }
    }

    /** The JDK's own selector provider class on this platform, or null where it is not known. */
    static String platformSelectorProvider() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String name = os.contains("linux") ? "sun.nio.ch.EPollSelectorProvider"
                : os.contains("mac") ? "sun.nio.ch.KQueueSelectorProvider" : null;
        if (name == null) {
            return null;
        }
        try {
            Class.forName(name, false, ClassLoader.getPlatformClassLoader());
            return name;
        } catch (ClassNotFoundException e) {
            // another JDK: it looks for its provider as it would have
            return null;
        }
    }

    static boolean throughServer(String[] args, Map<String, String> env) {
        if ("1".equals(env.get("EXECACHE_NO_DAEMON")) || "true".equalsIgnoreCase(env.get("EXECACHE_NO_DAEMON"))) {
            return false;
        }
        String command = null;
        for (String arg : args) {
            if (arg.equals("--")) {
                break;
            }
            // a watch runs until Ctrl-C in a terminal of its own: the warm server saves it nothing; a run that
            // shows its servers' stderr starts them here, where that stderr is
            if (arg.equals("--no-daemon") || arg.equals("--watch") || arg.equals("--server-logs")) {
                return false;
            }
            if (command == null && !arg.startsWith("-")) {
                command = arg;
            }
        }
        return command != null && SERVED.contains(command);
    }

    /** The first command starts the server and runs in-process meanwhile: it never waits longer than that. */
    private static void startInBackground(ServerDirectory directory, Map<String, String> env) {
        try {
            ServerControl.spawn(directory, env);
        } catch (IOException e) {
            System.err.println("execache: warning: the resident server could not be started: " + e.getMessage());
        }
    }

    /**
     * Runs the command in this process. The client's own jar names no other jar in its manifest:
     * a class path with the whole jar on it made every command, even one the server answers,
     * open and index that jar (the JDK looks for a socket provider on the class path); so the
     * rest is loaded here, from the jar beside it, only when a command runs in-process.
     */
    private static void inProcess(String[] args) throws Throwable {
        Class<?> main;
        try {
            main = Class.forName(IN_PROCESS_MAIN);
        } catch (ClassNotFoundException e) {
            URLClassLoader everything = new URLClassLoader(new URL[] {Path.of(ServerControl.fullClassPath()).toUri().toURL()},
                    ThinClient.class.getClassLoader());
            // libraries find their services (JSON mappers, drivers) through the context class loader
            Thread.currentThread().setContextClassLoader(everything);
            main = Class.forName(IN_PROCESS_MAIN, true, everything);
        }
        try {
            main.getMethod("main", String[].class).invoke(null, (Object) args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    private int talk(SocketChannel channel, String[] args, ServerDirectory directory) throws Throwable {
        OutputStream toServer = Frames.output(channel);
        InputStream fromServer = new BufferedInputStream(Frames.input(channel), 64 * 1024);
        Frames.Request request = new Frames.Request(ServerControl.build(), Arrays.asList(args),
                Path.of("").toAbsolutePath().toString(), env, System.console() != null);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> cancel(toServer), "execache-cancel"));
        try {
            Frames.write(toServer, Frames.Kind.RUN, request.encode());
            for (Frames.Frame frame = Frames.read(fromServer); frame != null; frame = Frames.read(fromServer)) {
                switch (frame.kind()) {
                    case STDOUT -> stdout.write(frame.payload());
                    case STDERR -> stderr.write(frame.payload());
                    case READ_STDIN -> pumpStdin(toServer);
                    case EXIT -> {
                        finished = true;
                        answered.countDown();
                        return frame.exitCode();
                    }
                    case OTHER_BUILD -> {
                        // A server of another build stopped listening on seeing this client: start ours.
                        finished = true;
                        answered.countDown();
                        channel.close();
                        startInBackground(directory, env);
                        inProcess(args);
                        return 0;
                    }
                    default -> throw new IOException("unexpected frame " + frame.kind());
                }
            }
        } catch (IOException e) {
            if (finished) {
                throw e;
            }
        }
        answered.countDown();
        if (finished) {
            return 0;
        }
        System.err.println("execache: the resident server ended before the command finished (it was stopped or "
                + "killed); nothing it stored is lost: run the command again, or with --no-daemon");
        return INFRASTRUCTURE;
    }

    /** Ctrl-C (or a kill) of this client cancels the command in the server: the code stops running. */
    private void cancel(OutputStream toServer) {
        if (finished) {
            return;
        }
        try {
            synchronized (toServer) {
                Frames.write(toServer, Frames.Kind.CANCEL, new byte[0]);
            }
            answered.await(10, TimeUnit.SECONDS);
        } catch (IOException e) {
            // the server is gone already, and with it the run
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Standard input goes to the server only when the command reads it (FILE is - or --context @-). */
    private void pumpStdin(OutputStream toServer) {
        Thread pump = new Thread(() -> {
            InputStream in = new FileInputStream(FileDescriptor.in);
            byte[] buffer = new byte[64 * 1024];
            try {
                for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                    synchronized (toServer) {
                        Frames.write(toServer, Frames.Kind.STDIN, buffer, 0, n);
                    }
                }
                synchronized (toServer) {
                    Frames.write(toServer, Frames.Kind.STDIN_END, new byte[0]);
                }
            } catch (IOException e) {
                // the command ended or the server went away; its answer tells which
            }
        }, "execache-stdin");
        pump.setDaemon(true);
        pump.start();
    }
}
