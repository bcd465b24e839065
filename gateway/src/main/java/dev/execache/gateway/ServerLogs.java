package dev.execache.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.core.spi.ToolCatalog;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.Locale;
import java.util.function.BiConsumer;

/** The log messages of the servers behind the gateway: the level they are asked to log from, and where they go. */
final class ServerLogs {
    private final ToolCatalog catalog;
    /** The level the servers were last asked to log from; null until one was asked. Guarded by this. */
    private McpSchema.LoggingLevel askedLevel;

    ServerLogs(ToolCatalog catalog) {
        this.catalog = catalog;
    }

    /** Asks every server to log from {@code level} up. */
    void setLevel(McpSchema.LoggingLevel level) {
        synchronized (this) {
            askedLevel = level;
        }
        catalog.setLogLevel(level.name().toLowerCase(Locale.ROOT));
    }

    /**
     * Asks the servers to log from {@code level} up unless they were asked for a lower level already: over HTTP
     * many agents ask, each for its own level, and execache passes on to each only what it asked for.
     */
    void logFrom(McpSchema.LoggingLevel level) {
        synchronized (this) {
            if (askedLevel != null && askedLevel.level() <= level.level()) {
                return;
            }
            askedLevel = level;
        }
        catalog.setLogLevel(level.name().toLowerCase(Locale.ROOT));
    }

    /**
     * Where the servers' log messages go, each as the params of a {@code notifications/message} tagged with its
     * server's name (also given): {@code logger} is the server's name, or {@code SERVER/LOGGER} when the server
     * named a logger; level and data as the server sent them.
     */
    void onLog(BiConsumer<String, ObjectNode> sink) {
        catalog.addLogListener((server, message) -> {
            ObjectNode tagged = Json.MAPPER.valueToTree(message);
            JsonNode logger = tagged.get("logger");
            tagged.put("logger", logger != null && logger.isTextual() ? server + "/" + logger.textValue() : server);
            sink.accept(server, tagged);
        });
    }
}
