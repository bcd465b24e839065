package dev.execache.mcp.server.protocol;

import dev.execache.gateway.Json;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelcontextprotocol.spec.McpSchema.LoggingLevel;
import java.util.Locale;
import java.util.logging.Level;
import java.util.logging.LogRecord;

/** execache's own log records (store outages, invalidations, Deno being installed...) as MCP log messages. */
public final class OwnLog {
    private OwnLog() {
    }

    /** The MCP log level of a log record's level. */
    public static LoggingLevel level(Level level) {
        int value = level.intValue();
        if (value >= Level.SEVERE.intValue()) {
            return LoggingLevel.ERROR;
        }
        if (value >= Level.WARNING.intValue()) {
            return LoggingLevel.WARNING;
        }
        return value >= Level.INFO.intValue() ? LoggingLevel.INFO : LoggingLevel.DEBUG;
    }

    /** The params of the {@code notifications/message} of {@code record}: its level, logger {@code execache}, its text. */
    public static ObjectNode params(LogRecord record) {
        ObjectNode params = Json.MAPPER.createObjectNode();
        params.put("level", level(record.getLevel()).name().toLowerCase(Locale.ROOT));
        params.put("logger", "execache");
        params.put("data", record.getMessage());
        return params;
    }
}
