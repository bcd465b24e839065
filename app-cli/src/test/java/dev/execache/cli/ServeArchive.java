package dev.execache.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The JVM options the tests start {@code serve} with: those the launchers give it on stdio (an AppCDS archive of the
 * classes serve loads before it answers, the quick compiler alone), over HTTP too (the launchers keep the optimizing
 * compiler there, which changes how fast serve answers, not what). The ITs start
 * well over a hundred serves; each spent about 0.85 s more CPU loading the same classes, on 2 cores shared
 * by two forks. The archive is written once per build, by the first fork that needs it (the other waits on a
 * file lock), from a serve that answers initialize and tools/list with a url server configured (one nothing listens
 * at: connecting loads the HTTP client most tests use); a JVM that cannot use it loads the classes as before, so
 * the archive never changes what a test sees.
 */
final class ServeArchive {
    private static final String REQUESTS = """
            {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"execache-it","version":"1"}}}
            {"jsonrpc":"2.0","method":"notifications/initialized"}
            {"jsonrpc":"2.0","id":2,"method":"tools/list"}
            """;
    private static List<String> options;

    private ServeArchive() {
    }

    /** The options to put before {@code -jar}; the archive is written first if this build has none yet. */
    static synchronized List<String> options() {
        if (options == null) {
            List<String> chosen = new ArrayList<>(List.of("-Xlog:cds=off", "-Xlog:cds+dynamic=off",
                    "-XX:TieredStopAtLevel=1", "-XX:CICompilerCount=1"));
            Path archive = written();
            if (archive != null) {
                chosen.add("-XX:SharedArchiveFile=" + archive);
            }
            options = List.copyOf(chosen);
        }
        return options;
    }

    /** The archive, written under a lock the two forks share; null when it could not be written. */
    private static Path written() {
        Path jar = ServeProcess.jar();
        Path archive = jar.resolveSibling("execache-serve-it.jsa");
        try (FileChannel lockFile = FileChannel.open(jar.resolveSibling("execache-serve-it.lock"),
                StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                FileLock lock = lockFile.lock()) {
            if (Files.isRegularFile(archive)
                    && Files.getLastModifiedTime(archive).compareTo(Files.getLastModifiedTime(jar)) > 0) {
                return archive;
            }
            Path home = Files.createDirectories(jar.resolveSibling("serve-archive-home"));
            int closed;
            try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                closed = free.getLocalPort();
            }
            Path config = Files.writeString(home.resolve("execache.yaml"), """
                    servers:
                      probe:
                        url: "http://127.0.0.1:%d/mcp"
                    """.formatted(closed));
            Path writing = jar.resolveSibling("execache-serve-it.jsa.writing");
            Files.deleteIfExists(writing);
            ProcessBuilder builder = new ProcessBuilder(ServeProcess.java(), "-Xlog:cds=off", "-Xlog:cds+dynamic=off",
                    "-XX:ArchiveClassesAtExit=" + writing, "-jar", jar.toString(), "serve", "--store", "memory",
                    "--config", config.toString())
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD);
            builder.environment().keySet().removeIf(name -> name.startsWith("EXECACHE_") || name.startsWith("OTEL_"));
            builder.environment().putAll(Map.of("HOME", home.toString(), "EXECACHE_WARM_POOL", "0",
                    "XDG_CONFIG_HOME", home.resolve(".config").toString(),
                    "XDG_CACHE_HOME", home.resolve(".cache").toString(),
                    "XDG_DATA_HOME", home.resolve(".local/share").toString()));
            Process serve = builder.start();
            try (OutputStream in = serve.getOutputStream()) {
                in.write(REQUESTS.getBytes(StandardCharsets.UTF_8));
            }
            if (!serve.waitFor(2, TimeUnit.MINUTES) || serve.exitValue() != 0 || !Files.isRegularFile(writing)) {
                serve.destroyForcibly();
                return null;
            }
            Files.move(writing, archive, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            return archive;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }
}
