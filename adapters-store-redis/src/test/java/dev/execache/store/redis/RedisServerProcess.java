package dev.execache.store.redis;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import org.awaitility.core.TerminalFailureException;
import redis.embedded.core.ExecutableProvider;

/**
 * A real {@code redis-server} on a free loopback port, for tests: the one on the PATH if
 * there is one, else the binary that the {@code embedded-redis} artifact ships. Nothing is
 * persisted. {@link #kill()} and {@link #restart()} keep the port, for fault tests.
 */
public final class RedisServerProcess implements AutoCloseable {
    private static File executable;

    /**
     * Bounds a start, not a speed check: on a loaded machine (two test JVMs and their servers
     * on 2 busy cores) starting the binary can take seconds.
     */
    private static final long STARTUP_SECONDS = 30;
    /** How many free ports a start tries when another process takes the one it found first. */
    private static final int PORT_ATTEMPTS = 5;

    private final int port;
    private final List<String> extraArgs;
    private final Path dir;
    private final boolean tls;
    private final String configText;
    private Process process;

    private RedisServerProcess(int port, List<String> extraArgs, boolean tls) throws IOException {
        this(port, extraArgs, tls, null);
    }

    private RedisServerProcess(int port, List<String> extraArgs, boolean tls, String configText) throws IOException {
        this.port = port;
        this.extraArgs = List.copyOf(extraArgs);
        this.dir = Files.createTempDirectory("execache-redis-");
        this.tls = tls;
        this.configText = configText;
    }

    /**
     * Starts a Redis Cluster node: cluster mode on, on a port whose cluster bus port (the port
     * plus 10000, fixed in Redis 6) is free too. It joins no cluster yet, see {@code TestRedisCluster}.
     */
    public static RedisServerProcess startClusterNode(String... extraArgs) throws IOException {
        List<String> args = new ArrayList<>(List.of("--cluster-enabled", "yes",
                "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "5000"));
        args.addAll(List.of(extraArgs));
        return startOnFreePort(() -> new RedisServerProcess(freeClusterPort(), args, false));
    }

    /**
     * Starts a Sentinel (the same binary, {@code --sentinel}) with this configuration, written to
     * a file of its own because a Sentinel rewrites its file as it learns the set.
     */
    public static RedisServerProcess startSentinel(String config) throws IOException {
        return startOnFreePort(() -> new RedisServerProcess(freePort(), List.of(), false, config));
    }

    /** Starts a server; {@code extraArgs} are redis-server options such as {@code --requirepass x}. */
    public static RedisServerProcess start(String... extraArgs) throws IOException {
        return startOnFreePort(() -> new RedisServerProcess(freePort(), List.of(extraArgs), false));
    }

    /** Starts a server that speaks TLS only, with this certificate and key (PEM files). */
    public static RedisServerProcess startTls(Path certificate, Path key) throws IOException {
        return startOnFreePort(() -> new RedisServerProcess(freePort(), List.of(
                "--tls-cert-file", certificate.toString(), "--tls-key-file", key.toString(),
                "--tls-ca-cert-file", certificate.toString(), "--tls-auth-clients", "no"), true));
    }

    private interface Unstarted {
        RedisServerProcess create() throws IOException;
    }

    /**
     * A port found free can be taken before the server binds it (tests run in two JVMs at once,
     * each starting servers): then the server exits, and the start is tried on another port.
     */
    private static RedisServerProcess startOnFreePort(Unstarted unstarted) throws IOException {
        for (int attempt = 1; ; attempt++) {
            RedisServerProcess server = unstarted.create();
            try {
                server.launch();
                return server;
            } catch (PortTaken e) {
                server.close();
                if (attempt == PORT_ATTEMPTS) {
                    throw e;
                }
            }
        }
    }

    private static final class PortTaken extends IOException {
        PortTaken(String message) {
            super(message);
        }
    }

    public int port() {
        return port;
    }

    public String url() {
        return (tls ? "rediss" : "redis") + "://127.0.0.1:" + port;
    }

    /** Kills the server at once (SIGKILL), as a crash would. */
    public void kill() {
        if (process != null && process.isAlive()) {
            try {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Stops the server without closing its socket (SIGSTOP), as a hung host or a partition would look. */
    public void pause() throws IOException, InterruptedException {
        signal("-STOP");
    }

    public void resume() throws IOException, InterruptedException {
        signal("-CONT");
    }

    /**
     * Sends {@code CLIENT PAUSE} on a connection of its own: the server holds every client's
     * commands for that long, as a Redis busy with a slow command or a failover would.
     */
    public void pauseClients(Duration pause) throws IOException {
        String millis = Long.toString(pause.toMillis());
        String command = "*3\r\n$6\r\nCLIENT\r\n$5\r\nPAUSE\r\n$" + millis.length() + "\r\n" + millis + "\r\n";
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.getOutputStream().write(command.getBytes(StandardCharsets.US_ASCII));
            byte[] reply = new byte[5];
            int read = socket.getInputStream().readNBytes(reply, 0, reply.length);
            String answer = new String(reply, 0, read, StandardCharsets.US_ASCII);
            if (!answer.startsWith("+OK")) {
                throw new IOException("CLIENT PAUSE answered " + answer);
            }
        }
    }

    /** Starts a fresh, empty server on the same port. */
    public void restart() throws IOException {
        kill();
        launch();
    }

    /** Kills the server and deletes its directory. */
    @Override
    public void close() {
        kill();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path file : files.toList()) {
                Files.deleteIfExists(file);
            }
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + dir, e);
        }
    }

    private void signal(String signal) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", signal, Long.toString(process.pid())).inheritIO().start();
        if (kill.waitFor() != 0) {
            throw new IOException("kill " + signal + " " + process.pid() + " failed");
        }
    }

    private void launch() throws IOException {
        List<String> command = new ArrayList<>(List.of(executable().getAbsolutePath()));
        if (configText != null) {
            Path config = dir.resolve("sentinel.conf");
            if (!Files.exists(config)) {
                Files.writeString(config, configText);
            }
            command.addAll(List.of(config.toString(), "--sentinel"));
        }
        command.addAll(List.of(
                "--port", tls ? "0" : Integer.toString(port),
                "--bind", "127.0.0.1",
                "--dir", dir.toString(),
                "--save", "",
                "--appendonly", "no",
                "--daemonize", "no"));
        if (tls) {
            command.addAll(List.of("--tls-port", Integer.toString(port)));
        }
        command.addAll(extraArgs);
        File log = dir.resolve("redis.log").toFile();
        process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log).start();
        try {
            // ready once this process says it listens: a connection alone may reach another
            // process that took the port meanwhile
            Awaitility.await("redis-server on port " + port).atMost(Duration.ofSeconds(STARTUP_SECONDS))
                    .pollInterval(Duration.ofMillis(20))
                    .failFast("redis-server exited", () -> !process.isAlive())
                    .until(() -> saysReady(log.toPath()) && accepts());
        } catch (ConditionTimeoutException | TerminalFailureException e) {
            process.destroyForcibly();
            String output = Files.readString(log.toPath());
            if (output.contains("Address already in use")) {
                throw new PortTaken("port " + port + " was taken before redis-server bound it:\n" + output);
            }
            throw new IOException("redis-server did not start on port " + port + ":\n" + output, e);
        }
    }

    /** A server's last start-up line: Sentinels print their ID instead. */
    private static boolean saysReady(Path log) throws IOException {
        String output = Files.readString(log);
        return output.contains("Ready to accept connections") || output.contains("Sentinel ID is");
    }

    private boolean accepts() {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static synchronized File executable() throws IOException {
        if (executable == null) {
            executable = onPath("redis-server");
            if (executable == null) {
                executable = ExecutableProvider.newJarResourceProvider().get();
            }
        }
        return executable;
    }

    private static File onPath(String name) {
        String path = System.getenv("PATH");
        if (path == null) {
            return null;
        }
        for (String directory : path.split(File.pathSeparator)) {
            File candidate = new File(directory, name);
            if (candidate.isFile() && candidate.canExecute()) {
                return candidate;
            }
        }
        return null;
    }

    /** A free port at most 55535 whose port + 10000 is free too. */
    private static int freeClusterPort() {
        for (int attempt = 0; attempt < 100; attempt++) {
            int port = freePort();
            if (port <= 55535) {
                try (ServerSocket bus = new ServerSocket(port + 10000)) {
                    return port;
                } catch (IOException taken) {
                    // try another
                }
            }
        }
        throw new IllegalStateException("no free pair of ports for a cluster node");
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
