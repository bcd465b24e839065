package dev.execache.core;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/** A {@link ToolVersionSource} whose versions are set by its owner, who tells listeners of changes. */
public final class MutableToolVersions implements ToolVersionSource {
    private final Map<String, String> versions = new ConcurrentHashMap<>();
    private final CopyOnWriteArrayList<Listener> listeners = new CopyOnWriteArrayList<>();

    public MutableToolVersions() {
    }

    public MutableToolVersions(Map<String, String> initial) {
        initial.forEach(this::requireValid);
        versions.putAll(initial);
    }

    /** Sets a tool's version; listeners hear of it only if it differs from the current one. */
    public void set(String tool, String version) {
        requireValid(tool, version);
        String previous = versions.put(tool, version);
        if (previous != null && !previous.equals(version)) {
            for (Listener listener : listeners) {
                listener.versionChanged(tool, previous, version);
            }
        }
    }

    @Override
    public Map<String, String> versions() {
        return Map.copyOf(new TreeMap<>(versions));
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
