package dev.execache.core;

import dev.execache.core.spi.ToolVersionSource;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/** A {@link ToolVersionSource} whose versions are set by its owner, who tells listeners of changes. */
public final class MutableToolVersions implements ToolVersionSource {
    private final Map<String, String> versions = new ConcurrentHashMap<>();
    private final CopyOnWriteArrayList<Listener> listeners = new CopyOnWriteArrayList<>();
    /** Every lookup of a cached call reads the versions: a copy made per change, not per read. */
    private volatile Map<String, String> snapshot = Map.of();

    public MutableToolVersions() {
    }

    public MutableToolVersions(Map<String, String> initial) {
        initial.forEach(this::requireValid);
        versions.putAll(initial);
        snapshot = Map.copyOf(versions);
    }

    /** Sets a tool's version; listeners hear of it only if it differs from the current one. */
    public void set(String tool, String version) {
        requireValid(tool, version);
        String previous;
        synchronized (this) {
            previous = versions.put(tool, version);
            if (!version.equals(previous)) {
                snapshot = Map.copyOf(versions);
            }
        }
        if (previous != null && !previous.equals(version)) {
            for (Listener listener : listeners) {
                listener.versionChanged(tool, previous, version);
            }
        }
    }

    @Override
    public Map<String, String> versions() {
        return snapshot;
    }

    @Override
    public void addListener(Listener listener) {
        listeners.add(listener);
    }

    private void requireValid(String tool, String version) {
        if (tool == null || tool.isBlank()) {
            throw new IllegalArgumentException("tool name must not be blank");
        }
        if (version == null || version.isEmpty()) {
            throw new IllegalArgumentException("version of tool '" + tool + "' must not be empty");
        }
    }
}
