package dev.execache.cli;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import redis.embedded.core.ExecutableProvider;

/**
 * A real {@code redis-server} on a free loopback port: the one on the PATH if there is one,
 * else the binary the {@code embedded-redis} artifact ships. Nothing is persisted, so a
 * {@link #restart()} on the same port starts empty.
 */
final class RedisServerProcess implements AutoCloseable {
    private final int port = freePort();
    private final Path dir;
    private Process process;

    private RedisServerProcess() throws IOException {
        dir = Files.createTempDirectory("execache-serve-redis-");
        dir.toFile().deleteOnExit();
    }

    static RedisServerProcess start() throws IOException {
        RedisServerProcess server = new RedisServerProcess();
        server.launch();
        return server;
    }

    /** The server's URL on database {@code db}: tests keep apart by database. */
    String url(int db) {
        return "redis://127.0.0.1:" + port + "/" + db;
    }

    /** Kills the server at once (SIGKILL). */
    void kill() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** Starts a fresh, empty server on the same port. */
    void restart() throws IOException, InterruptedException {
        kill();
        launch();
    }

    @Override
    public void close() throws InterruptedException {
        kill();
    }

    private void launch() throws IOException {
        File log = dir.resolve("redis.log").toFile();
        process = new ProcessBuilder(List.of(executable().getAbsolutePath(), "--port", Integer.toString(port),
                "--bind", "127.0.0.1", "--dir", dir.toString(), "--save", "", "--appendonly", "no"))
                .redirectErrorStream(true).redirectOutput(log).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!accepts()) {
            if (!process.isAlive() || System.nanoTime() > deadline) {
                process.destroyForcibly();
                throw new IOException("redis-server did not start on port " + port + ":\n" + Files.readString(log.toPath()));
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while starting redis-server", e);
            }
        }
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
        for (String directory : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            File candidate = new File(directory, "redis-server");
            if (candidate.isFile() && candidate.canExecute()) {
                return candidate;
            }
        }
        return ExecutableProvider.newJarResourceProvider().get();
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
