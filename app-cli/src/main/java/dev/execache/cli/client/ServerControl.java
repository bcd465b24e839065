package dev.execache.cli.client;

import java.io.BufferedInputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Starts, asks after and stops the resident server; JDK classes only, as the thin client is. */
public final class ServerControl {
    /** The class the server process starts with (named, not referenced: the client must not load it). */
    static final String SERVER_MAIN = "dev.execache.cli.resident.ResidentServer";
    private static final Duration START_WAIT = Duration.ofMinutes(2);

    private ServerControl() {
    }

    private static final String CLIENT_JAR = "execache-client.jar";
    private static final String FULL_JAR = "execache.jar";

    /**
     * The class path with everything (the framework, the server): this process's own, unless
     * it runs the thin client's jar alone, whose classes are a part of the jar beside it.
     */
    public static String fullClassPath() {
        String classPath = System.getProperty("java.class.path", "");
        Path jar = Path.of(classPath);
        if (jar.getFileName() != null && jar.getFileName().toString().equals(CLIENT_JAR)) {
            return jar.resolveSibling(FULL_JAR).toString();
        }
        return classPath;
    }

    /**
     * What this build is: the jar's size and modification time (rewritten by every build), so a
     * client never talks to a server of another build. The client's own jar is rewritten only
     * when the client changes, so the jar beside it, with everything, is the one that counts.
     */
    public static String build() {
        String classPath = fullClassPath();
        if (!classPath.contains(File.pathSeparator) && classPath.endsWith(".jar")) {
            Path jar = Path.of(classPath);
            try {
                return "1:" + Files.size(jar) + ":" + Files.getLastModifiedTime(jar).toMillis();
            } catch (IOException e) {
                return "1:" + classPath;
            }
        }
        return "1:" + classPath;
    }

    /** Starts a server in the background, in a session of its own so a Ctrl-C at the terminal does not reach it. */
    public static Process spawn(ServerDirectory directory, Map<String, String> env) throws IOException {
        String problem = directory.create();
        if (problem != null) {
            throw new IOException(problem);
        }
        List<String> command = new ArrayList<>();
        for (String setsid : List.of("/usr/bin/setsid", "/bin/setsid")) {
            if (Files.isExecutable(Path.of(setsid))) {
                command.add(setsid);
                break;
            }
        }
        command.add(ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        // C1 only: a command's work (parsing it, wiring it, a store lookup) runs once per command, so code
        // compiled sooner pays more than code compiled better, and C2 compiling in the background took a core
        // from the client (the server's CPU over its first 45 hits, compiler threads included: 27 -> 13 ms each).
        command.addAll(List.of("-Xlog:cds=off", "-Xlog:cds+dynamic=off", "-XX:TieredStopAtLevel=1", "-cp", fullClassPath(),
                SERVER_MAIN));
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectErrorStream(true)
                .redirectOutput(directory.log().toFile());
        builder.environment().clear();
        builder.environment().putAll(env);
        return builder.start();
    }

    /** Starts a server unless one of this build answers, and waits until one does. */
    public static int start(ServerDirectory directory, Map<String, String> env, PrintStream out, PrintStream err)
            throws IOException, InterruptedException {
        String problem = directory.problem();
        if (problem != null) {
            err.println("execache: the resident server cannot be used: " + problem);
            return 3;
        }
        long deadline = System.nanoTime() + START_WAIT.toNanos();
        boolean spawned = false;
        while (System.nanoTime() < deadline) {
            SocketChannel channel = directory.connect();
            if (channel != null) {
                try (channel) {
                    Frames.Request request = new Frames.Request(build(), List.of(), "", Map.of(), false);
                    OutputStream toServer = Frames.output(channel);
                    Frames.write(toServer, Frames.Kind.STATUS, request.encode());
                    InputStream fromServer = new BufferedInputStream(Frames.input(channel));
                    StringBuilder answer = new StringBuilder();
                    for (Frames.Frame frame = Frames.read(fromServer); frame != null && frame.kind() != Frames.Kind.EXIT;
                            frame = Frames.read(fromServer)) {
                        answer.append(frame.text());
                    }
                    if (answer.length() > 0) {
                        String status = answer.toString();
                        if (status.contains("\n" + Frames.BUILD_LINE + build() + "\n")) {
                            out.println("execache: the resident server is running (" + firstLine(status) + ")");
                            return 0;
                        }
                        // A server of another build: replaced by one of this build.
                        stop(directory, new PrintStream(OutputStream.nullOutputStream()));
                        spawned = false;
                    }
                }
            } else if (!spawned) {
                // Once: setsid may hand the server to a child of its own and end at once.
                spawn(directory, env);
                spawned = true;
            }
            Thread.sleep(20);
        }
        err.println("execache: the resident server did not start in " + START_WAIT.toMinutes() + " minutes; see "
                + directory.log());
        return 3;
    }

    /** Prints what the server says about itself; exit 0, or 1 when no server is running. */
    public static int status(ServerDirectory directory, PrintStream out) throws IOException {
        SocketChannel channel = directory.connect();
        if (channel == null) {
            out.println("no resident server is running (" + directory.socket() + ")");
            return 1;
        }
        return ask(channel, Frames.Kind.STATUS, out);
    }

    /** Stops the server, waiting until it has finished the commands it was running. */
    public static int stop(ServerDirectory directory, PrintStream out) throws IOException {
        SocketChannel channel = directory.connect();
        if (channel == null) {
            out.println("no resident server is running");
            return 0;
        }
        return ask(channel, Frames.Kind.STOP, out);
    }

    private static int ask(SocketChannel channel, Frames.Kind kind, PrintStream out) throws IOException {
        try (channel) {
            Frames.write(Frames.output(channel), kind,
                    new Frames.Request(build(), List.of(), "", Map.of(), false).encode());
            InputStream fromServer = new BufferedInputStream(Frames.input(channel));
            for (Frames.Frame frame = Frames.read(fromServer); frame != null; frame = Frames.read(fromServer)) {
                switch (frame.kind()) {
                    case STDOUT -> out.print(frame.text());
                    case EXIT -> {
                        out.flush();
                        return frame.exitCode();
                    }
                    default -> {
                    }
                }
            }
            // The server closed the connection as it ended.
            return 0;
        }
    }

    private static String firstLine(String text) {
        int end = text.indexOf('\n');
        return (end < 0 ? text : text.substring(0, end)).trim().replaceAll(" +", " ");
    }

    static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
