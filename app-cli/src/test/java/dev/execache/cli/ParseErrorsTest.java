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
import java.util.LinkedHashMap;
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
    void aKeyGivenTwiceIsAnErrorNotTheLastOnesValue() {
        String message = configError("""
                servers:
                  github:
                    command: gh-mcp
                  github:
                    url: https://api.example.org/mcp
                """);

        assertThat(message).startsWith(dir.resolve("execache.yaml") + ": line 4, column ")
                .contains("not valid YAML: a key given twice").doesNotContain("Duplicate");
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
    void jsonAndTomlFilesAreNamedAlikeTheTomlOnesUnderTheirTableAndKey() {
        String json = "{\"mcpServers\": {\"a\": {\"env\": {\"KEY\": " + TOKEN + "}}}}";
        JacksonException jsonError = parseError(() -> new ObjectMapper().readTree(json));
        assertThat(ParseErrors.describe(Path.of("mcp.json"), "JSON", json, jsonError))
                .startsWith("mcp.json: line 1, column ").contains("not valid JSON: a word that is not a value here")
                .doesNotContain("SECRET");

        String toml = "[mcp_servers.github]\ncommand = \"npx\"\nenv = { TOKEN = " + TOKEN + " }\n";
        JacksonException tomlError = parseError(() -> new TomlMapper().readTree(toml));
        assertThat(ParseErrors.describe(Path.of("config.toml"), "TOML", toml, tomlError))
                .startsWith("config.toml: line 3").contains("not valid TOML: ").endsWith("(under mcp_servers.github.env)")
                .doesNotContain("SECRET");
    }

    @Test
    void eachFormatsUsualSlipsAreSaidInPlainWordsUnderTheirKey() {
        assertThat(configError("servers:\n  gh:\n    env: {TOKEN: %s}}\n".formatted(TOKEN)))
                .contains("line 3, column ").contains("a '}' that closes nothing (under servers.gh.env)")
                .doesNotContain("SECRET");
        assertThat(configError("servers:\n  gh:\n    command: \"npx\" %s\n".formatted(TOKEN)))
                .contains("text where the value above has ended").doesNotContain("SECRET");
        assertThat(configError("servers:\n  gh:\n    command: @%s\n".formatted(TOKEN)))
                .contains("a character that cannot start a value (quote a value that starts with @ or `)")
                .doesNotContain("SECRET");

        Map<String, String> toml = new LinkedHashMap<>();
        toml.put("env = { TOKEN = \"%s }\n", "the line ends too early (a quote, a [ or a { that is not closed, or a"
                + " key without '= value') (under mcp_servers.gh.env)");
        toml.put("env = { TOKEN = %s }\n", "a word that is not a value here (text needs quotes) (under mcp_servers.gh.env)");
        toml.put("env = { TOKEN = \"%s\", }\n", "a ',' after the last entry of a { } table (under mcp_servers.gh.env)");
        toml.put("args = [\"-y\" \"%s\"]\n", "more after a value on its line (a ',' missing between two entries, or"
                + " text that needs quotes) (under mcp_servers.gh.args)");
        toml.put("[mcp_servers.gh]\ncommand = \"%s\"\n", "a table given twice (under mcp_servers.gh)");
        toml.put("env = { TOKEN = \"\\q%s\" }\n", "an unknown escape (\\) in a quoted value (under mcp_servers.gh.env)");
        toml.forEach((line, words) -> {
            String text = "[mcp_servers.gh]\ncommand = \"npx\"\n" + line.formatted(TOKEN);
            JacksonException error = parseError(() -> new TomlMapper().readTree(text));
            assertThat(ParseErrors.describe(Path.of("config.toml"), "TOML", text, error)).as(line)
                    .startsWith("config.toml: line 3, column ").contains("not valid TOML: " + words)
                    .doesNotContain("SECRET");
        });

        Map<String, String> json = new LinkedHashMap<>();
        json.put("{\"mcpServers\": {\"a\": {\"env\": {\"KEY\": \"\\q%s\"}}}}", "an unknown escape (\\) in a quoted"
                + " value (under mcpServers.a.env.KEY)");
        json.put("{\"mcpServers\": {\"a\": {\"args\": [\"-y\" \"%s\"]}}}", "a ',' missing between two entries"
                + " (under mcpServers.a.args[1])");
        json.put("{\"mcpServers\": {\"a\": {\"command\": \"npx\", env: {\"KEY\": \"%s\"}}}}", "a key without double"
                + " quotes (under mcpServers.a)");
        json.put("{\"mcpServers\": {\"a\": {\"env\": {\"KEY\": \"%s\"}}}}}", "a '}' or ']' that closes nothing");
        json.put("{\"mcpServers\": {\"a\": {\"env\": {\"KEY\": \"%s\"}}}} {}", "more after the end of the file's object");
        json.forEach((text, words) -> {
            String file = text.formatted(TOKEN);
            JacksonException error = parseError(() -> new ObjectMapper()
                    .enable(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS).readTree(file));
            assertThat(ParseErrors.describe(Path.of("mcp.json"), "JSON", file, error)).as(text)
                    .startsWith("mcp.json: line 1, column ").endsWith("not valid JSON: " + words)
                    .doesNotContain("SECRET");
        });
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
