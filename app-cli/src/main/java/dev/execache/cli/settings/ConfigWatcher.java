package dev.execache.cli.settings;

import dev.execache.core.MutableToolVersions;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Watches the config file while {@code serve} runs and applies its {@code tools:} section:
 * a tool whose version changed is set on the {@link MutableToolVersions}, whose listeners
 * (the policy) remove its entries and log how many. It polls the file's content, which
 * also sees editors that replace the file instead of writing into it.
 *
 * <p>Tools pinned on the command line ({@code --tool NAME=VERSION}) keep their version.
 * A file that cannot be read or parsed changes nothing (a warning says why); the other
 * settings in it take effect at the next start.
 */
public final class ConfigWatcher implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("dev.execache.cli");

    private final Path file;
    private final MutableToolVersions versions;
    private final Set<String> pinned;
    private ScheduledExecutorService poller;
    private byte[] lastContent;
    private ConfigFile lastConfig = ConfigFile.empty();
    private boolean reportedMissing;
    private boolean looked;

    /**
     * Takes a first look at once, so that a change made since the settings were read is not missed.
     *
     * @param file the config file, which need not exist yet
     */
    public ConfigWatcher(Path file, MutableToolVersions versions, Set<String> pinned) {
        this.file = file;
        this.versions = versions;
        this.pinned = Set.copyOf(pinned);
        poll();
    }

    /** Polls every {@code interval} on a daemon thread until closed. */
    public ConfigWatcher start(Duration interval) {
        poller = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "execache-config-watcher");
            thread.setDaemon(true);
            return thread;
        });
        poller.scheduleWithFixedDelay(this::pollSafely, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
        return this;
    }

    private void pollSafely() {
        try {
            poll();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "watching " + file + " failed: " + e);
        }
    }

    /** Looks at the file once and applies what changed since the last look. */
    public synchronized void poll() {
        byte[] content = read();
        boolean first = !looked;
        looked = true;
        if (content == null) {
            if (!first && lastContent != null && !reportedMissing) {
                LOG.log(Level.WARNING, file + " is gone; the tool versions in use stay");
                reportedMissing = true;
            }
            lastContent = null;
            return;
        }
        reportedMissing = false;
        if (Arrays.equals(content, lastContent)) {
            return;
        }
        lastContent = content;
        ConfigFile config;
        try {
            config = ConfigFile.parse(new String(content, StandardCharsets.UTF_8), file);
        } catch (UsageException e) {
            LOG.log(Level.WARNING, "config changed but cannot be used, the tool versions in use stay: " + e.getMessage());
            return;
        }
        apply(config.tools());
        if (!first && !sameOutsideTools(config, lastConfig)) {
            LOG.log(Level.INFO, file + ": settings outside tools: changed; they take effect when execache serve restarts");
        }
        lastConfig = config;
    }

    private void apply(Map<String, String> tools) {
        Map<String, String> current = versions.versions();
        for (Map.Entry<String, String> tool : new TreeMap<>(tools).entrySet()) {
            String name = tool.getKey();
            if (pinned.contains(name)) {
                continue;
            }
            String before = current.get(name);
            if (before == null) {
                versions.set(name, tool.getValue());
                LOG.log(Level.INFO, "tool " + name + " added (" + tool.getValue() + ")");
            } else if (!before.equals(tool.getValue())) {
                versions.set(name, tool.getValue());
            }
        }
        for (String gone : lastConfig.tools().keySet()) {
            if (!tools.containsKey(gone) && !pinned.contains(gone)) {
                LOG.log(Level.INFO, "tool " + gone + " is no longer in " + file + "; its version "
                        + current.get(gone) + " stays in use until execache serve restarts");
            }
        }
    }

    private static boolean sameOutsideTools(ConfigFile a, ConfigFile b) {
        return Objects.equals(a.enabled(), b.enabled())
                && Objects.equals(a.maxEntries(), b.maxEntries())
                && Objects.equals(a.ttlSeconds(), b.ttlSeconds())
                && Objects.equals(a.store(), b.store())
                && Objects.equals(a.sqlitePath(), b.sqlitePath())
                && Objects.equals(a.redisUrl(), b.redisUrl())
                && Objects.equals(a.redisPartitions(), b.redisPartitions())
                && Objects.equals(a.requireStore(), b.requireStore())
                && Objects.equals(a.timeoutSeconds(), b.timeoutSeconds())
                && Objects.equals(a.memoryMb(), b.memoryMb())
                && Objects.equals(a.allowRead(), b.allowRead());
    }

    private byte[] read() {
        try {
            return Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            LOG.log(Level.DEBUG, "cannot read " + file + ": " + e);
            return lastContent;
        }
    }

    @Override
    public void close() {
        if (poller != null) {
            poller.shutdownNow();
        }
    }
}
