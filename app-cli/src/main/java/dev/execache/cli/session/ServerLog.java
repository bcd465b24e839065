package dev.execache.cli.session;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.temporal.ChronoUnit;
import java.util.function.Consumer;

/**
 * The file the servers a command starts write their stderr to ({@code Settings.serverLog}), so that a run prints only
 * its own output: each line with its time, its server's name first. Opened at the first line (a command whose
 * servers say nothing creates nothing); a file over 1 MB when opened is moved to {@code servers.log.1} first. A log
 * that cannot be written loses its lines, never fails the command.
 */
final class ServerLog implements Consumer<String> {
    private static final long MAX_BYTES = 1 << 20;
    private static final System.Logger LOG = System.getLogger("dev.execache.cli");

    private final Path file;
    private final Clock clock;
    private Writer writer;
    private boolean failed;

    ServerLog(Path file, Clock clock) {
        this.file = file;
        this.clock = clock;
    }

    @Override
    public synchronized void accept(String line) {
        if (failed) {
            return;
        }
        try {
            if (writer == null) {
                writer = open();
            }
            writer.write(clock.instant().truncatedTo(ChronoUnit.MILLIS) + " " + line + "\n");
            writer.flush();
        } catch (IOException | SecurityException e) {
            failed = true;
            LOG.log(System.Logger.Level.DEBUG, "the servers' log " + file + " cannot be written: " + e.getMessage());
        }
    }

    private Writer open() throws IOException {
        Files.createDirectories(file.getParent());
        if (Files.isRegularFile(file) && Files.size(file) > MAX_BYTES) {
            Files.move(file, file.resolveSibling(file.getFileName() + ".1"), StandardCopyOption.REPLACE_EXISTING);
        }
        return Files.newBufferedWriter(file, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                StandardOpenOption.APPEND, StandardOpenOption.WRITE);
    }
}
