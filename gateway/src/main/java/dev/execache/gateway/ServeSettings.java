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
 */
public record ServeSettings(Limits limits, String configFile, ObjectNode store) {
    public ServeSettings {
        Objects.requireNonNull(limits, "limits must not be null");
        Objects.requireNonNull(configFile, "configFile must not be null");
        Objects.requireNonNull(store, "store must not be null");
    }
}
