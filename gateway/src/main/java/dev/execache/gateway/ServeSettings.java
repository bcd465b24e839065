package dev.execache.gateway;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.core.Limits;
import java.util.Objects;

/**
 * What {@link ServeTools} needs to know of the settings it serves with.
 *
 * @param limits each run's limits; a call may ask for a shorter timeout, never a longer one
 * @param configFile the config file that holds the tools' versions, as a person would name it
 * @param store the store, where it is and its limits, as {@code cache_stats} shows them
 * @param expose whether tools/list holds the servers' tools too, or execache's own only (code mode)
 */
public record ServeSettings(Limits limits, String configFile, ObjectNode store, Expose expose) {
    public ServeSettings {
        Objects.requireNonNull(limits, "limits must not be null");
        Objects.requireNonNull(configFile, "configFile must not be null");
        Objects.requireNonNull(store, "store must not be null");
        Objects.requireNonNull(expose, "expose must not be null");
    }

    /** Listing every server's tools. */
    public ServeSettings(Limits limits, String configFile, ObjectNode store) {
        this(limits, configFile, store, Expose.ALL);
    }

    public ServeSettings withExpose(Expose newExpose) {
        return new ServeSettings(limits, configFile, store, newExpose);
    }
}
