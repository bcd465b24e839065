package dev.execache.tools.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A server's identity: a one-way digest of everything in its configuration that can change its answers. */
class ServerIdentityTest {
    private static final String TOKEN = "ghp_secret0123456789";
    private static final McpServerSettings BASE = new McpServerSettings("acct", "npx", List.of("-y", "acct-server"),
            Map.of("TOKEN", TOKEN, "REGION", "eu"), Path.of("/srv/a"), true);

    private static McpServerSettings with(String command, List<String> args, Map<String, String> env, Path cwd) {
        return new McpServerSettings("acct", command, args, env, cwd, true);
    }

    @Test
    void identicalConfigurationsHaveOneIdentityAndAnyDifferenceGivesAnother() {
        String base = BASE.identity(null);

        assertThat(with("npx", List.of("-y", "acct-server"), Map.of("REGION", "eu", "TOKEN", TOKEN), Path.of("/srv/a"))
                .identity(null)).isEqualTo(base).hasSize(32);
        assertThat(BASE.startedFor(Map.of("HOME", "/home/someone"), Path.of("/elsewhere")).identity(null))
                .as("the inherited environment is not part of it; a configured cwd stays").isEqualTo(base);
        assertThat(List.of(
                with("node", BASE.args(), BASE.env(), BASE.cwd()).identity(null),
                with("npx", List.of("-y", "acct-server@2"), BASE.env(), BASE.cwd()).identity(null),
                with("npx", BASE.args(), Map.of("TOKEN", "ghp_other", "REGION", "eu"), BASE.cwd()).identity(null),
                with("npx", BASE.args(), Map.of("TOKEN", TOKEN, "REGION", "us"), BASE.cwd()).identity(null),
                with("npx", BASE.args(), Map.of("TOKEN", TOKEN), BASE.cwd()).identity(null),
                with("npx", BASE.args(), BASE.env(), Path.of("/srv/b")).identity(null),
                BASE.identity("a fleet key of 16+ chars".getBytes(StandardCharsets.UTF_8))))
                .doesNotContain(base).doesNotHaveDuplicates();
    }

    @Test
    void withoutACwdTheCommandsWorkingDirectoryIsPartOfIt() {
        McpServerSettings noCwd = with("npx", BASE.args(), BASE.env(), null);

        assertThat(noCwd.startedFor(Map.of(), Path.of("/project/one")).identity(null))
                .isNotEqualTo(noCwd.startedFor(Map.of(), Path.of("/project/two")).identity(null));
    }

    @Test
    void aServerSharedPubliclyHasNoneAndItsToolsKeepTheVersionTheyHadWithoutOne() {
        assertThat(BASE.withSharePublic(true).identity(null)).isNull();
        assertThat(BASE.withSharePublic(true).startedFor(Map.of(), Path.of("/x")).sharePublic()).isTrue();
    }

    @Test
    void noValueOfTheEnvironmentCanBeReadFromItOrFromTheSettingsText() {
        assertThat(BASE.identity(null)).doesNotContain(TOKEN).matches("[0-9a-f]{32}");
        assertThat(BASE.toString()).contains("TOKEN").doesNotContain(TOKEN);
    }
}
