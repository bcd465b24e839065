package dev.execache.core;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

/** What execache logs while it is open, one formatted message a line. */
public final class CapturedLog extends Handler implements AutoCloseable {
    private final Logger logger = Logger.getLogger("dev.execache");
    private final Level previousLevel = logger.getLevel();
    private final List<String> lines = new CopyOnWriteArrayList<>();

    public CapturedLog() {
        this(Level.INFO);
    }

    /** @param level the least level kept ({@code FINE} for what execache logs at DEBUG) */
    public CapturedLog(Level level) {
        logger.setLevel(level);
        logger.addHandler(this);
    }

    public List<String> lines() {
        return List.copyOf(lines);
    }

    @Override
    public void publish(LogRecord record) {
        lines.add(new SimpleFormatter().formatMessage(record));
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
        logger.removeHandler(this);
        logger.setLevel(previousLevel);
    }
}
