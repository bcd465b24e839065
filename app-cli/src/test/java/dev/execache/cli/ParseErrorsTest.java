package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.toml.TomlMapper;
import dev.execache.cli.settings.ConfigFile;
import dev.execache.cli.settings.ParseErrors;
import dev.execache.cli.settings.Settings;
import dev.execache.cli.settings.UsageException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A configuration file that does not parse is named by line, column and key, and none of its text is shown. */
class ParseErrorsTest {
    private static final String TOKEN = "ghp_SECRET0123456789abcdef";

    @TempDir
    Path dir;

    private String configError(String yaml) {
        Path file = dir.resolve("execache.yaml");
        Throwable thrown = catchThrowable(() -> ConfigFile.parse(yaml, file));
        assertThat(thrown).isInstanceOf(UsageException.class);
        return thrown.getMessage();
    }

    @Test
    void aColonAfterAQuotedTokenIsNamedByLineColumnAndKeyWithoutTheToken() {
        String message = configError("""
                servers:
                  github:
                    url: https://api.example.org/mcp
                    headers: {Authorization: "Bearer %s"}: oops
                """.formatted(TOKEN));

        assertThat(message).startsWith(dir.resolve("execache.yaml") + ": line 4, column ")
                .contains("not valid YAML: a ': ' where no key can start (quote a value that holds ': ')")
                .endsWith("(under servers.github.headers)")
                .doesNotContain("SECRET").doesNotContain("Bearer").doesNotContain("oops").doesNotContain("reader");
    }

    @Test
    void aLineIndentedOutOfPlaceSaysSoUnderItsKey() {
        String message = configError("""
                servers:
                  github:
                    env:
                      TOKEN: %s
                     bad: x
                """.formatted(TOKEN));

        assertThat(message).contains("line 5, column ").contains("the indentation does not fit the lines above")
                .doesNotContain("SECRET").doesNotContain("bad: x");
    }

    @Test
    void anUnclosedQuoteOrListIsSaidInPlainWords() {
        assertThat(configError("tools: {a: \"v1 " + TOKEN + "\n")).contains("a quoted value that is not closed")
                .doesNotContain("SECRET");
        assertThat(configError("code_execution:\n  allow_read: [a, " + TOKEN + "\n"))
                .contains("a [ ] list that is not closed").doesNotContain("SECRET");
        assertThat(configError("code_execution:\n\ttimeout_seconds: 3\n")).contains("not tabs");
    }

    @Test
    void aValueOfTheWrongKindIsNamedByItsKeyAndKindNeverShown() {
        assertThat(configError("servers:\n  github:\n    url: https://api.example.org/mcp\n    oauth:\n"
                + "      client_id: app\n      client_secret: [%s]\n".formatted(TOKEN)))
                .contains("servers.github.oauth.client_secret must be a non-empty string, not a list")
                .doesNotContain("SECRET");
        assertThat(configError("code_execution:\n  cache:\n    enabled: %s\n".formatted(TOKEN)))
                .contains("code_execution.cache.enabled must be true or false, not a text").doesNotContain("SECRET");
        assertThat(configError("servers:\n  a:\n    command: x\n    share: %s\n".formatted(TOKEN)))
                .contains("servers.a.share must be private").doesNotContain("SECRET");
        assertThat(configError("servers:\n  a:\n    command: x\n    ttl: %s\n".formatted(TOKEN)))
                .contains("servers.a.ttl: the value is not a duration").doesNotContain("SECRET");
        assertThat(configError("servers:\n  a:\n    command: x\n    args: [{key: %s}]\n".formatted(TOKEN)))
                .contains("servers.a.args must hold only strings, not a mapping").doesNotContain("SECRET");
    }

    @Test
    void aUrlThatIsNotOneIsNamedByTheCharacterWhereItStops() {
        assertThat(configError("servers:\n  a:\n    url: \"https://api.example.org/mcp?token=%s here\"\n"
                .formatted(TOKEN)))
                .contains("servers.a.url is not a URL: Illegal character in query at character 61")
                .doesNotContain("SECRET").doesNotContain("example.org");
    }

    @Test
    void resolvingTheSettingsSaysTheSame() throws IOException {
        Files.writeString(dir.resolve("execache.yaml"), "serve:\n  http_tokens: {a: \"" + TOKEN + "\"}: x\n");

        assertThatThrownBy(() -> Settings.resolve(Settings.Flags.none(), Map.of(), dir))
                .hasMessageContaining("line 2, column ").hasMessageNotContaining("SECRET");
    }

    @Test
    void jsonAndTomlFilesAreNamedAlikeTheTomlOnesUnderTheirTable() {
        String json = "{\"mcpServers\": {\"a\": {\"env\": {\"KEY\": " + TOKEN + "}}}}";
        JacksonException jsonError = parseError(() -> new ObjectMapper().readTree(json));
        assertThat(ParseErrors.describe(Path.of("mcp.json"), "JSON", json, jsonError))
                .startsWith("mcp.json: line 1, column ").contains("not valid JSON: a word that is not a value here")
                .doesNotContain("SECRET");

        String toml = "[mcp_servers.github]\ncommand = \"npx\"\nenv = { TOKEN = " + TOKEN + " }\n";
        JacksonException tomlError = parseError(() -> new TomlMapper().readTree(toml));
        assertThat(ParseErrors.describe(Path.of("config.toml"), "TOML", toml, tomlError))
                .startsWith("config.toml: line 3").contains("not valid TOML: ").endsWith("(under mcp_servers.github)")
                .doesNotContain("SECRET");
    }

    private interface Parse {
        Object run() throws IOException;
    }

    private static JacksonException parseError(Parse parse) {
        try {
            parse.run();
        } catch (JacksonException e) {
            return e;
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        throw new AssertionError("parsed");
    }
}
