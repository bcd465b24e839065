package dev.execache.dist;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Drives an installed {@code execache serve} with the official TypeScript SDK client (drive-serve.mjs). */
final class ServeDriver {
    private static final ObjectMapper JSON = new ObjectMapper();

    private ServeDriver() {
    }

    /** What the client saw: the server's name and version, its tools, two identical execute_code calls. */
    static JsonNode drive(NoJavaMachine machine, Path directory, List<String> serve) throws Exception {
        // the client's node is the build's: the machine's PATH may have none (serve itself needs no node)
        List<String> command = new ArrayList<>(List.of(Release.node().toString(),
                Release.testNode().resolve("drive-serve.mjs").toString()));
        command.addAll(serve);
        NoJavaMachine.Result result = machine.run(directory, command).succeeded();
        assertThat(result.stdout()).as("the client's report; stderr: %s", result.stderr()).isNotBlank();
        return JSON.readTree(result.stdout());
    }

    static List<String> toolNames(JsonNode session) {
        List<String> names = new ArrayList<>();
        session.path("tools").forEach(name -> names.add(name.asText()));
        return names;
    }
}
