package dev.execache.gateway;

import dev.execache.gateway.Json;
import dev.execache.gateway.ServerLogs;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.spec.McpSchema.LoggingLevel;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The servers' log level and their messages, tagged with the server's name. */
class ServerLogsTest {
    private final ScriptedCatalog catalog = new ScriptedCatalog();
    private final ServerLogs logs = new ServerLogs(catalog);

    @Test
    void eachAgentsLevelIsPassedOnOnlyWhenItAsksForMoreThanWasAsked() {
        logs.logFrom(LoggingLevel.WARNING);
        logs.logFrom(LoggingLevel.ERROR);
        logs.logFrom(LoggingLevel.DEBUG);
        logs.setLevel(LoggingLevel.ERROR);
        logs.logFrom(LoggingLevel.INFO);

        assertThat(catalog.levels).containsExactly("warning", "debug", "error", "info");
    }

    private static Map<String, Object> ordered(String... fieldsAndValues) {
        Map<String, Object> message = new LinkedHashMap<>();
        for (int i = 0; i < fieldsAndValues.length; i += 2) {
            message.put(fieldsAndValues[i], fieldsAndValues[i + 1]);
        }
        return message;
    }

    @Test
    void aMessageIsTaggedWithItsServersName() {
        List<String> heard = new CopyOnWriteArrayList<>();
        logs.onLog((server, message) -> heard.add(server + " " + Json.write(message)));

        catalog.log("lab", ordered("level", "info", "data", "hello"));
        catalog.log("lab", ordered("level", "info", "logger", "db", "data", "slow"));

        assertThat(heard).containsExactly("lab {\"level\":\"info\",\"data\":\"hello\",\"logger\":\"lab\"}",
                "lab {\"level\":\"info\",\"logger\":\"lab/db\",\"data\":\"slow\"}");
    }
}
