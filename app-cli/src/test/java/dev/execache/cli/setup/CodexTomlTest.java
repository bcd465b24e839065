package dev.execache.cli.setup;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Codex's config.toml loses exactly the tables of the servers that move, whatever form they are written in. */
class CodexTomlTest {
    private static final List<String> ARGS = List.of("serve", "--config", "/home/me/.config/execache/execache.yaml");

    @Test
    void quotedNamesSubTablesAndTheCommentsOfTheNextTableAreHandled() {
        String text = """
                model = "o3"

                [mcp_servers."docs.search"]
                command = "npx"
                args = ["-y", "docs-search"]

                [mcp_servers."docs.search".env]
                KEY = "v"

                # keep: about the next table
                [mcp_servers.kept]
                command = "kept-server"
                """;

        String rewritten = CodexToml.rewrite(text, Set.of("docs.search", "execache"), "/opt/execache", ARGS, List.of(), 40);

        assertThat(rewritten).isEqualTo("""
                model = "o3"

                [mcp_servers.execache]
                command = "/opt/execache"
                args = ["serve", "--config", "/home/me/.config/execache/execache.yaml"]
                startup_timeout_sec = 40

                # keep: about the next table
                [mcp_servers.kept]
                command = "kept-server"
                """);
    }

    @Test
    void inlineTablesAndDottedKeysAreRemovedLineByLineAndTheEntryGoesAtTheEnd() {
        String text = """
                [mcp_servers]
                fetch = { command = "uvx", args = ["mcp-server-fetch"] }
                other = { command = "other" }
                """;

        String rewritten = CodexToml.rewrite(text, Set.of("fetch", "execache"), "/opt/execache", ARGS, List.of("TOKEN"), 40);

        assertThat(ClientConfig.parseToml(null, rewritten).path("mcp_servers").toString()).isEqualTo(
                "{\"other\":{\"command\":\"other\"},\"execache\":{\"command\":\"/opt/execache\",\"args\":[\"serve\","
                        + "\"--config\",\"/home/me/.config/execache/execache.yaml\"],\"env_vars\":[\"TOKEN\"],"
                        + "\"startup_timeout_sec\":40}}");
    }

    @Test
    void aStringWithQuotesAndBackslashesIsWrittenAsTomlReadsIt() {
        String rewritten = CodexToml.rewrite("", Set.of("execache"), "C:\\Program Files\\\"execache\"", ARGS, List.of(), 40);

        assertThat(ClientConfig.parseToml(null, rewritten).path("mcp_servers").path("execache").path("command").asText())
                .isEqualTo("C:\\Program Files\\\"execache\"");
    }

    @Test
    void theCommentAboveAMovedTableGoesWithItAndNoneIsLeftAboveExecachesEntry() {
        String text = """
                model = "o3"

                # GitHub, with the token of the work account
                [mcp_servers.github]
                command = "github-mcp"

                # Postgres of the app
                [mcp_servers.pg]
                command = "pg-mcp"

                # stays: about the next table
                [mcp_servers.kept]
                command = "kept-server"
                """;

        String rewritten = CodexToml.rewrite(text, Set.of("github", "pg", "execache"), "/opt/execache", ARGS, List.of(), 40);

        assertThat(rewritten).isEqualTo("""
                model = "o3"

                [mcp_servers.execache]
                command = "/opt/execache"
                args = ["serve", "--config", "/home/me/.config/execache/execache.yaml"]
                startup_timeout_sec = 40

                # stays: about the next table
                [mcp_servers.kept]
                command = "kept-server"
                """);
        assertThat(CodexToml.comments(text, "github")).containsExactly("# GitHub, with the token of the work account");
        assertThat(CodexToml.comments(text, "pg")).containsExactly("# Postgres of the app");
        assertThat(CodexToml.comments(text, "kept")).containsExactly("# stays: about the next table");
    }
}
