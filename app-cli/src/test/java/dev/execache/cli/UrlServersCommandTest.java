package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.execache.cli.command.ExitCode;
import dev.execache.cli.session.GatewayCatalog;
import dev.execache.cli.settings.Environment;
import dev.execache.cli.settings.Settings;
import dev.execache.cli.settings.UsageException;
import dev.execache.gateway.Json;
import dev.execache.gateway.TestDeno;
import dev.execache.tools.mcp.HttpLab;
import dev.execache.tools.mcp.McpToolCatalog;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Commands with a url server in execache.yaml: tools, config, run, and the token kept out of output and store. */
class UrlServersCommandTest {
    private static final String TOKEN = "tok-77c1-never-shown";
    private static HttpLab lab;

    @TempDir
    Path dir;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    @BeforeAll
    static void startLab() throws IOException {
        lab = HttpLab.start("--era", "2025", "--token", TOKEN);
    }

    @AfterAll
    static void stopLab() throws InterruptedException {
        lab.close();
    }

    @BeforeEach
    void config() throws IOException {
        Files.writeString(dir.resolve("execache.yaml"), """
                servers:
                  remote:
                    url: "%s"
                    headers: {Authorization: "Bearer ${LAB_TOKEN}"}
                """.formatted(lab.url()));
    }

    private int run(Map<String, String> extra, String... args) {
        Map<String, String> environment = new HashMap<>(extra);
        environment.put("XDG_CACHE_HOME", dir.resolve("cache").toString());
        try {
            environment.put("EXECACHE_DENO", TestDeno.executable().toString());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return Main.run(args, environment, dir, new ByteArrayInputStream(new byte[0]),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private String printed() {
        return out.toString(StandardCharsets.UTF_8) + err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void toolsListsAUrlServersTools() {
        assertThat(run(Map.of("LAB_TOKEN", TOKEN), "tools")).as(printed()).isEqualTo(ExitCode.OK);

        assertThat(out.toString(StandardCharsets.UTF_8))
                .containsPattern("remote\\s+remote__get_count\\s+[0-9a-f]{12}\\s+yes\\s+annotation readOnlyHint");
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("server remote: connected (http-lab 1.0.0, MCP 2025-11-25");
        assertThat(printed()).doesNotContain(TOKEN);
    }

    @Test
    void aVariableThatIsNotSetIsAUsageErrorNamingIt() {
        assertThat(run(Map.of(), "tools")).isEqualTo(ExitCode.USAGE);

        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains("server remote: headers.Authorization names the environment variable LAB_TOKEN, which is not set");
    }

    @Test
    void serveGoesOnWithoutAServerWhoseVariableIsNotSetAndSaysWhyOnACall() throws IOException {
        Environment command = new Environment(Map.of(), dir, new ByteArrayInputStream(new byte[0]));
        Settings settings = Settings.resolve(new Settings.Flags(null, "memory", null, null, false, null, null, null, null,
                null, List.of(), List.of(), null), command.variables(), command.workingDir());

        try (McpToolCatalog serving = GatewayCatalog.serve(settings, command)) {
            String text = Json.MAPPER.readTree(serving.call("remote__get_count", Map.of()).json())
                    .at("/content/0/text").textValue();

            assertThat(text).contains("LAB_TOKEN, which is not set; the server is unavailable");
        }
        assertThatThrownBy(() -> GatewayCatalog.start(settings, command)).isInstanceOf(UsageException.class)
                .hasMessageContaining("LAB_TOKEN");
    }

    @Test
    void configShowsWhetherEachVariableIsSetButNeverItsValue() {
        assertThat(run(Map.of("LAB_TOKEN", TOKEN), "config")).isEqualTo(ExitCode.OK);
        String set = out.toString(StandardCharsets.UTF_8);
        out.reset();
        assertThat(run(Map.of(), "config")).isEqualTo(ExitCode.OK);
        String unset = out.toString(StandardCharsets.UTF_8);

        assertThat(set).contains("remote " + lab.url() + " headers Authorization (LAB_TOKEN set)  [config ")
                .doesNotContain(TOKEN);
        assertThat(unset).contains("(LAB_TOKEN unset)");
    }

    @Test
    void codeCallsAUrlServersToolsAndTheTokenIsNotInTheStore() throws IOException {
        Files.writeString(dir.resolve("code.js"), "return (await tools.remote.get_count({who: 'code'})).who");

        assertThat(run(Map.of("LAB_TOKEN", TOKEN), "run", "code.js", "--json")).as(printed()).isEqualTo(ExitCode.OK);

        assertThat(out.toString(StandardCharsets.UTF_8)).contains("\"result\":\"code\"")
                .contains("\"toolCalls\":[{\"tool\":\"remote__get_count\",\"cache\":\"miss\"");
        assertThat(printed()).doesNotContain(TOKEN);
        try (Stream<Path> files = Files.walk(dir.resolve("cache"))) {
            for (Path file : files.filter(Files::isRegularFile).toList()) {
                assertThat(new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1)).as(file.toString())
                        .doesNotContain(TOKEN);
            }
        }
    }
}
