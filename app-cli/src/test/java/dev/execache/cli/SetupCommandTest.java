package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.dataformat.toml.TomlMapper;
import dev.execache.cli.command.ExitCode;
import dev.execache.cli.settings.ConfigFile;
import dev.execache.cli.settings.GatewayConfig;
import dev.execache.tools.mcp.McpServerSettings;
import dev.execache.tools.mcp.UrlServerSettings;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code execache setup} against real files in a temporary HOME, one realistic configuration file
 * per client (each with a secret in an env value or a header): what it shows, what --apply writes,
 * and that --undo gives back every byte.
 */
class SetupCommandTest {
    private static final JsonMapper JSONC = JsonMapper.builder()
            .enable(JsonReadFeature.ALLOW_JAVA_COMMENTS, JsonReadFeature.ALLOW_TRAILING_COMMA).build();

    @TempDir
    Path dir;

    private Path home;
    private Path project;
    private Path state;
    private Path execache;
    private Map<String, String> moreEnv = Map.of();
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private static final String CLAUDE_CODE = """
            {
              "numStartups": 42,
              "installMethod": "npm",
              "mcpServers": {
                "github": {
                  "type": "stdio",
                  "command": "npx",
                  "args": [
                    "-y",
                    "@modelcontextprotocol/server-github"
                  ],
                  "env": {
                    "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_SECRET_claude_0123456789"
                  }
                },
                "sentry": {
                  "type": "http",
                  "url": "https://mcp.sentry.dev/mcp",
                  "headers": {
                    "Authorization": "Bearer SECRET_sentry_token"
                  }
                },
                "notion": {
                  "type": "stdio",
                  "command": "npx",
                  "args": ["-y", "@notionhq/notion-mcp-server"],
                  "env": {"NOTION_TOKEN": "${NOTION_TOKEN}"}
                }
              },
              "projects": {
                "/home/me/app": {
                  "allowedTools": [],
                  "mcpServers": {
                    "postgres": {
                      "type": "stdio",
                      "command": "npx",
                      "args": ["-y", "@modelcontextprotocol/server-postgres", "postgresql://app:SECRET_pg@localhost/app"],
                      "env": {}
                    }
                  },
                  "enabledMcpjsonServers": [],
                  "hasTrustDialogAccepted": true
                }
              }
            }
            """;

    private static final String CLAUDE_PROJECT = """
            {
              "mcpServers": {
                "filesystem": {
                  "command": "npx",
                  "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/app"]
                }
              }
            }
            """;

    private static final String CLAUDE_DESKTOP = """
            {
              "mcpServers": {
                "github": {
                  "command": "npx",
                  "args": ["-y", "@modelcontextprotocol/server-github"],
                  "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_SECRET_claude_0123456789"}
                },
                "memory": {
                  "command": "npx",
                  "args": ["-y", "@modelcontextprotocol/server-memory"],
                  "env": {"MEMORY_FILE_PATH": "/home/me/memory.jsonl"}
                }
              },
              "globalShortcut": ""
            }
            """;

    private static final String CURSOR = """
            {
              "mcpServers": {
                "github": {
                  "command": "docker",
                  "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
                  "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_SECRET_cursor_9876543210"}
                },
                "linear": {
                  "url": "https://mcp.linear.app/mcp",
                  "headers": {"Authorization": "Bearer lin_api_SECRET_linear"}
                },
                "legacy": {
                  "type": "sse",
                  "url": "https://legacy.example.com/sse"
                }
              }
            }
            """;

    private static final String VSCODE_PROJECT = """
            {
              // The team's servers
              "inputs": [
                {"type": "promptString", "id": "perplexity-key", "description": "Perplexity API Key", "password": true}
              ],
              "servers": {
                "perplexity": {
                  "type": "stdio",
                  "command": "npx",
                  "args": ["-y", "server-perplexity-ask"],
                  "env": {"PERPLEXITY_API_KEY": "${input:perplexity-key}"}
                },
                "fetch": {
                  "type": "stdio",
                  "command": "uvx",
                  "args": ["mcp-server-fetch"],
                },
              }
            }
            """;

    private static final String WINDSURF = """
            {
              "mcpServers": {
                "brave-search": {
                  "command": "npx",
                  "args": ["-y", "@modelcontextprotocol/server-brave-search"],
                  "env": {"BRAVE_API_KEY": "BSA_SECRET_windsurf"}
                },
                "docs": {
                  "serverUrl": "https://docs.example.com/mcp",
                  "headers": {"X-Api-Key": "SECRET_docs_key"}
                }
              }
            }
            """;

    private static final String CODEX = """
            model = "gpt-5-codex"
            approval_policy = "on-request"

            # Documentation lookups
            [mcp_servers.context7]
            command = "npx"
            args = ["-y", "@upstash/context7-mcp"]
            startup_timeout_sec = 20

            [mcp_servers.context7.env]
            CONTEXT7_API_KEY = "ctx7_SECRET_codex"

            [mcp_servers.figma]
            url = "https://mcp.figma.com/mcp"
            bearer_token_env_var = "FIGMA_OAUTH_TOKEN"

            [profiles.fast]
            model = "gpt-5-mini"
            """;

    private static final String ZED = """
            // Zed settings
            //
            // For information on how to configure Zed, see the Zed documentation.
            {
              "theme": "One Dark",
              "context_servers": {
                "sqlite": {
                  "source": "custom",
                  "command": "uvx",
                  "args": ["mcp-server-sqlite", "--db-path", "/home/me/test.db"],
                  "env": {"SQLITE_KEY": "zed_SECRET_value"},
                },
                "mcp-server-github": {
                  "source": "extension",
                  "settings": {"github_personal_access_token": "ghp_SECRET_zed_extension"},
                },
              },
              "vim_mode": true,
            }
            """;

    @BeforeEach
    void writeEveryClientsFiles() throws IOException {
        home = Files.createDirectories(dir.resolve("home/me"));
        project = Files.createDirectories(home.resolve("app"));
        state = dir.resolve("state");
        write(home.resolve(".claude.json"), CLAUDE_CODE);
        write(project.resolve(".mcp.json"), CLAUDE_PROJECT);
        write(home.resolve(".config/Claude/claude_desktop_config.json"), CLAUDE_DESKTOP);
        write(home.resolve(".cursor/mcp.json"), CURSOR);
        write(project.resolve(".vscode/mcp.json"), VSCODE_PROJECT);
        write(home.resolve(".codeium/windsurf/mcp_config.json"), WINDSURF);
        write(home.resolve(".codex/config.toml"), CODEX);
        write(home.resolve(".config/zed/settings.json"), ZED);
        Files.setPosixFilePermissions(home.resolve(".cursor/mcp.json"), PosixFilePermissions.fromString("rw-r--r--"));
        Files.setPosixFilePermissions(home.resolve(".claude.json"), PosixFilePermissions.fromString("rw-------"));
        execache = write(dir.resolve("opt/execache/bin/execache"), "#!/bin/sh\nexit 0\n");
        Files.setPosixFilePermissions(execache, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    private static Path write(Path file, String text) throws IOException {
        Files.createDirectories(file.getParent());
        return Files.writeString(file, text);
    }

    private int run(String... args) {
        out.reset();
        err.reset();
        Map<String, String> env = new TreeMap<>(Map.of("HOME", home.toString(), "XDG_STATE_HOME", state.toString(),
                "XDG_CACHE_HOME", dir.resolve("cache").toString(), "PATH", "/usr/bin:/bin"));
        env.putAll(moreEnv);
        return Main.run(args, env, project, new ByteArrayInputStream(new byte[0]),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private int apply(String... more) {
        List<String> args = new ArrayList<>(List.of("setup", "--apply", "--execache", execache.toString()));
        args.addAll(List.of(more));
        return run(args.toArray(String[]::new));
    }

    private String stdout() {
        return out.toString(StandardCharsets.UTF_8);
    }

    private String stderr() {
        return err.toString(StandardCharsets.UTF_8);
    }

    private Path config() {
        return home.resolve(".config/execache/execache.yaml");
    }

    /** Every file under HOME: its bytes and permissions. */
    private Map<String, String> snapshot() throws IOException {
        Map<String, String> files = new TreeMap<>();
        try (Stream<Path> paths = Files.walk(home)) {
            for (Path path : paths.toList()) {
                String permissions = PosixFilePermissions.toString(Files.getPosixFilePermissions(path));
                files.put(home.relativize(path).toString(), Files.isRegularFile(path)
                        ? permissions + " " + Files.readString(path) : permissions + " (directory)");
            }
        }
        return files;
    }

    private void assertNoSecretShown() {
        assertThat(stdout()).doesNotContain("SECRET");
        assertThat(stderr()).doesNotContain("SECRET");
    }

    @Test
    void withoutOptionsItListsEachClientFileAndItsServersWithoutSecrets() throws IOException {
        Map<String, String> before = snapshot();

        assertThat(run("setup")).isEqualTo(ExitCode.OK);

        assertThat(stdout())
                .contains("Claude Code (user) " + home.resolve(".claude.json"))
                .contains("Claude Code (project) " + project.resolve(".mcp.json"))
                .contains("Claude Desktop (user)").contains("Cursor (user)").contains("VS Code (project)")
                .contains("Windsurf (user)").contains("Codex (user)").contains("Zed (user)")
                .contains("command npx -y @modelcontextprotocol/server-github  env GITHUB_PERSONAL_ACCESS_TOKEN=***")
                .contains("url https://mcp.sentry.dev/mcp  headers Authorization=***")
                .contains("postgresql://app:***@localhost/app").contains("[project /home/me/app]")
                .contains("url https://mcp.figma.com/mcp  headers Authorization=***")
                .contains("(stays: its env PERPLEXITY_API_KEY uses a ${...} variable, which only VS Code fills in)")
                .contains("(stays: it uses the SSE transport")
                .contains("(stays: a Zed extension provides it)")
                // the 13 that --apply puts under servers:, github found alike in Claude Code and Claude Desktop once
                .containsPattern("\n13 servers can move behind execache \\(listed 1[4-9] times in the clients' files\\): ");
        assertNoSecretShown();
        assertThat(snapshot()).isEqualTo(before);
    }

    @Test
    void dryRunPrintsTheChangeAndWritesNothing() throws IOException {
        Map<String, String> before = snapshot();

        assertThat(apply("--dry-run")).isEqualTo(ExitCode.OK);

        assertThat(stdout()).contains("Dry run: nothing was written.")
                .contains("GITHUB_PERSONAL_ACCESS_TOKEN: \"***\"")
                .contains(execache + " serve --config " + config());
        assertNoSecretShown();
        assertThat(snapshot()).isEqualTo(before);
        assertThat(state).doesNotExist();
    }

    @Test
    void applyThenUndoGivesBackEveryFileByteForByte() throws IOException {
        Map<String, String> before = snapshot();

        assertThat(apply()).as(stderr()).isEqualTo(ExitCode.OK);
        assertNoSecretShown();
        assertThat(snapshot()).isNotEqualTo(before);

        assertThat(run("setup", "--undo")).as(stderr()).isEqualTo(ExitCode.OK);
        assertNoSecretShown();
        assertThat(snapshot()).isEqualTo(before);
        assertThat(home.resolve(".config/execache")).doesNotExist();
        assertThat(run("setup", "--undo")).isEqualTo(ExitCode.OK);
        assertThat(stdout()).contains("Nothing to undo");
    }

    @Test
    void theConfigIsOwnerOnlyAndListsTheMovedServersWithTheirEnvAndHeaders() throws IOException {
        assertThat(apply()).as(stderr()).isEqualTo(ExitCode.OK);

        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(config()))).isEqualTo("rw-------");
        GatewayConfig gateway = ConfigFile.parse(Files.readString(config()), config()).gateway();
        Map<String, Object> servers = new TreeMap<>();
        gateway.servers().forEach(server -> servers.put(server.settings().name(), server.settings()));
        assertThat(servers).containsOnlyKeys("github", "sentry", "postgres", "filesystem", "memory", "github-cursor",
                "linear", "fetch", "brave-search", "docs", "context7", "figma", "sqlite");
        McpServerSettings github = (McpServerSettings) servers.get("github");
        assertThat(github.command()).isEqualTo("npx");
        assertThat(github.args()).containsExactly("-y", "@modelcontextprotocol/server-github");
        assertThat(github.env()).containsExactly(Map.entry("GITHUB_PERSONAL_ACCESS_TOKEN", "ghp_SECRET_claude_0123456789"));
        assertThat(((McpServerSettings) servers.get("github-cursor")).env())
                .containsEntry("GITHUB_PERSONAL_ACCESS_TOKEN", "ghp_SECRET_cursor_9876543210");
        assertThat(((McpServerSettings) servers.get("context7")).env()).containsEntry("CONTEXT7_API_KEY", "ctx7_SECRET_codex");
        UrlServerSettings sentry = (UrlServerSettings) servers.get("sentry");
        assertThat(sentry.headers()).containsEntry("Authorization", "Bearer SECRET_sentry_token");
        assertThat(((UrlServerSettings) servers.get("figma")).headers())
                .containsEntry("Authorization", "Bearer ${FIGMA_OAUTH_TOKEN}");
        assertThat(((UrlServerSettings) servers.get("docs")).url().toString()).isEqualTo("https://docs.example.com/mcp");

        // the command serve runs loads the same file: `execache config --config FILE` lists them, without secrets
        assertThat(run("config", "--config", config().toString())).as(stderr()).isEqualTo(ExitCode.OK);
        assertThat(stdout()).contains("github npx").contains("github-cursor docker").contains("sqlite uvx")
                .contains("figma https://mcp.figma.com/mcp headers Authorization");
        assertNoSecretShown();
    }

    @Test
    void eachRewrittenClientFileParsesAndListsOneExecacheEntryInPlaceOfTheMovedServers() throws IOException {
        assertThat(apply()).as(stderr()).isEqualTo(ExitCode.OK);
        List<String> serve = List.of("serve", "--config", config().toString());

        JsonNode claude = JSONC.readTree(home.resolve(".claude.json").toFile());
        assertThat(names(claude.path("mcpServers"))).containsExactly("execache", "notion");
        assertExecacheEntry(claude.path("mcpServers").path("execache"), serve);
        assertThat(claude.path("projects").path("/home/me/app").path("mcpServers").isEmpty()).isTrue();
        assertThat(claude.path("numStartups").asInt()).isEqualTo(42);

        JsonNode cursor = JSONC.readTree(home.resolve(".cursor/mcp.json").toFile());
        assertThat(names(cursor.path("mcpServers"))).containsExactly("execache", "legacy");
        assertExecacheEntry(cursor.path("mcpServers").path("execache"), serve);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(home.resolve(".cursor/mcp.json"))))
                .isEqualTo("rw-r--r--");

        for (Path file : List.of(project.resolve(".mcp.json"), home.resolve(".config/Claude/claude_desktop_config.json"),
                home.resolve(".codeium/windsurf/mcp_config.json"))) {
            JsonNode servers = JSONC.readTree(file.toFile()).path("mcpServers");
            assertThat(names(servers)).as(file.toString()).containsExactly("execache");
            assertExecacheEntry(servers.path("execache"), serve);
        }

        String vscodeText = Files.readString(project.resolve(".vscode/mcp.json"));
        assertThat(vscodeText).contains("// The team's servers");
        JsonNode vscode = JSONC.readTree(vscodeText);
        assertThat(names(vscode.path("servers"))).containsExactly("perplexity", "execache");
        assertExecacheEntry(vscode.path("servers").path("execache"), serve);
        assertThat(vscode.path("inputs").size()).isEqualTo(1);

        String zedText = Files.readString(home.resolve(".config/zed/settings.json"));
        assertThat(zedText).startsWith("// Zed settings\n").contains("\"vim_mode\": true,");
        JsonNode zed = JSONC.readTree(zedText);
        assertThat(names(zed.path("context_servers"))).containsExactly("execache", "mcp-server-github");
        assertExecacheEntry(zed.path("context_servers").path("execache"), serve);
        assertThat(zed.path("context_servers").path("execache").path("source").asText()).isEqualTo("custom");

        String codexText = Files.readString(home.resolve(".codex/config.toml"));
        assertThat(codexText).contains("approval_policy = \"on-request\"").contains("[profiles.fast]");
        JsonNode codex = new TomlMapper().readTree(codexText);
        assertThat(names(codex.path("mcp_servers"))).containsExactly("execache");
        assertExecacheEntry(codex.path("mcp_servers").path("execache"), serve);
        // Codex passes a server few of its variables: the one figma's header names must reach execache
        assertThat(codex.path("mcp_servers").path("execache").path("env_vars").toString()).isEqualTo("[\"FIGMA_OAUTH_TOKEN\"]");
        // Codex gives a server 10 s to start unless told; serve lists its tools once its servers are up
        assertThat(codex.path("mcp_servers").path("execache").path("startup_timeout_sec").asInt()).isEqualTo(40);
        // the comment above context7 went with it, not left above execache's entry
        assertThat(codexText).doesNotContain("# Documentation lookups");
        assertThat(Files.readString(config())).containsPattern(
                "  # from Codex [^\n]*config.toml\n  # Documentation lookups\n  context7:\n");
        assertThat(codex.path("profiles").path("fast").path("model").asText()).isEqualTo("gpt-5-mini");
    }

    @Test
    void aCommentAboveAServerAnotherClientListsTooGoesWithTheOneEntryItBecomesAndItsToolTimeoutWithExecache() throws IOException {
        write(home.resolve(".codex/config.toml"), """
                # GitHub, with the token of the work account
                [mcp_servers.github]
                command = "npx"
                args = ["-y", "@modelcontextprotocol/server-github"]
                env = { GITHUB_PERSONAL_ACCESS_TOKEN = "ghp_SECRET_claude_0123456789" }
                tool_timeout_sec = 120

                # about the profiles below
                [profiles.fast]
                model = "gpt-5-mini"
                """);

        assertThat(apply("--client", "claude-code,codex", "--server", "github")).as(stderr()).isEqualTo(ExitCode.OK);

        assertThat(stdout()).contains("1 server moves behind execache");
        assertThat(Files.readString(config())).containsPattern(
                "  # from Claude Code [^\n]*\\.claude\\.json\n  # GitHub, with the token of the work account\n  github:\n");
        assertThat(Files.readString(home.resolve(".codex/config.toml"))).doesNotContain("# GitHub")
                .contains("# about the profiles below\n[profiles.fast]")
                .as("its calls, through execache now, get as long as Codex gave them")
                .contains("startup_timeout_sec = 40\ntool_timeout_sec = 120\n");
    }

    private static List<String> names(JsonNode servers) {
        List<String> names = new ArrayList<>();
        servers.fieldNames().forEachRemaining(names::add);
        return names;
    }

    private void assertExecacheEntry(JsonNode entry, List<String> args) {
        assertThat(entry.path("command").asText()).isEqualTo(execache.toString());
        List<String> actual = new ArrayList<>();
        entry.path("args").forEach(arg -> actual.add(arg.asText()));
        assertThat(actual).isEqualTo(args);
    }

    @Test
    void applyingTwiceDoesNotPutExecacheBehindExecache() throws IOException {
        assertThat(apply()).as(stderr()).isEqualTo(ExitCode.OK);
        Map<String, String> once = snapshot();

        assertThat(apply()).as(stderr()).isEqualTo(ExitCode.OK);

        assertThat(stdout()).contains("Nothing to move");
        assertThat(snapshot()).isEqualTo(once);
        assertThat(run("setup")).isEqualTo(ExitCode.OK);
        assertThat(stdout()).contains("execache  (execache itself)").contains("Nothing to move behind execache.");
    }

    @Test
    void aClientFileThatDoesNotParseIsNamedWithItsLineAndNothingIsWritten() throws IOException {
        write(home.resolve(".cursor/mcp.json"), "{\n  \"mcpServers\": {\n    \"github\": {\"command\": \"npx\" \"args\": []}\n  }\n}\n");
        Map<String, String> before = snapshot();

        assertThat(apply()).isEqualTo(ExitCode.USAGE);

        assertThat(stderr()).isEqualTo("execache: setup: " + home.resolve(".cursor/mcp.json") + ": line 3, column 33:"
                + " not valid JSON: a ',' missing between two entries (under mcpServers.github.command) (fix it, or"
                + " leave Cursor out: --client with the others)\n");
        assertThat(snapshot()).isEqualTo(before);
        assertThat(state).doesNotExist();
    }

    @Test
    void aParseErrorDoesNotQuoteTheSecretItStumbledOn() throws IOException {
        write(home.resolve(".codeium/windsurf/mcp_config.json"),
                "{\"mcpServers\": {\"brave\": {\"command\": \"npx\", \"env\": {\"BRAVE_API_KEY\": BSA_SECRET_unquoted}}}}\n");
        write(config(), "servers:\n  x:\n    command: npx\n    env: {KEY: SECRET_yaml: bad}\n");

        assertThat(run("setup")).isEqualTo(ExitCode.USAGE);
        assertThat(stderr()).contains(home.resolve(".codeium/windsurf/mcp_config.json") + ": line 1, column ")
                .contains(": not valid JSON: a word that is not a value here (text needs quotes)"
                        + " (under mcpServers.brave.env.BRAVE_API_KEY)");
        assertNoSecretShown();

        write(home.resolve(".codeium/windsurf/mcp_config.json"), "{\"mcpServers\": {}}\n");
        write(home.resolve(".codex/config.toml"), "[mcp_servers.ctx]\ncommand = \"npx\"\n"
                + "env = { KEY = \"ctx7_SECRET_unclosed }\n");
        assertThat(run("setup")).isEqualTo(ExitCode.USAGE);
        assertThat(stderr()).contains(home.resolve(".codex/config.toml") + ": line 3, column ")
                .contains(": not valid TOML: the line ends too early (a quote, a [ or a { that is not closed, or a key"
                        + " without '= value') (under mcp_servers.ctx.env)");
        assertNoSecretShown();

        assertThat(apply("--client", "cursor")).isEqualTo(ExitCode.USAGE);
        assertThat(stderr()).contains(config().toString());
        assertNoSecretShown();
    }

    @Test
    void onlyTheChosenClientsAndServersMove() throws IOException {
        assertThat(apply("--client", "cursor", "--server", "linear")).as(stderr()).isEqualTo(ExitCode.OK);

        GatewayConfig gateway = ConfigFile.parse(Files.readString(config()), config()).gateway();
        assertThat(gateway.servers()).extracting(server -> server.settings().name()).containsExactly("linear");
        JsonNode cursor = JSONC.readTree(home.resolve(".cursor/mcp.json").toFile());
        assertThat(names(cursor.path("mcpServers"))).containsExactly("github", "execache", "legacy");
        assertThat(Files.readString(home.resolve(".claude.json"))).isEqualTo(CLAUDE_CODE);
    }

    @Test
    void anExistingConfigKeepsItsTextGetsOwnerOnlyAndUndoGivesItBack() throws IOException {
        String mine = """
                # my execache settings
                code_execution:
                  timeout_seconds: 20

                servers:
                    # the one I added by hand
                    memory:
                        command: npx
                        args: [-y, "@modelcontextprotocol/server-memory"]
                        env: {MEMORY_FILE_PATH: /home/me/memory.jsonl}

                tool_calls:
                  rediscover_seconds: 30
                """;
        write(config(), mine);
        Files.setPosixFilePermissions(config(), PosixFilePermissions.fromString("rw-r--r--"));
        Map<String, String> before = snapshot();

        assertThat(apply()).as(stderr()).isEqualTo(ExitCode.OK);

        String text = Files.readString(config());
        assertThat(text).startsWith("# my execache settings\n").contains("# the one I added by hand")
                .contains("tool_calls:\n  rediscover_seconds: 30");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(config()))).isEqualTo("rw-------");
        GatewayConfig gateway = ConfigFile.parse(text, config()).gateway();
        // Claude Desktop's memory is the one already there: one server, not two
        assertThat(gateway.servers()).extracting(server -> server.settings().name())
                .contains("memory", "github", "context7").doesNotContain("memory-claude-desktop");
        assertThat(stdout()).contains("(already in the configuration)");

        assertThat(run("setup", "--undo")).as(stderr()).isEqualTo(ExitCode.OK);
        assertThat(snapshot()).isEqualTo(before);
    }

    @Test
    void undoRefusesToLoseChangesMadeSinceUnlessForced() throws IOException {
        Map<String, String> before = snapshot();
        assertThat(apply()).as(stderr()).isEqualTo(ExitCode.OK);
        Files.writeString(home.resolve(".cursor/mcp.json"), "{\"mcpServers\": {}}\n");

        assertThat(run("setup", "--undo")).isEqualTo(ExitCode.USAGE);
        assertThat(stderr()).contains("changed since setup wrote them: " + home.resolve(".cursor/mcp.json"));
        assertThat(config()).exists();

        assertThat(run("setup", "--undo", "--force")).as(stderr()).isEqualTo(ExitCode.OK);
        assertThat(snapshot()).isEqualTo(before);
    }

    @Test
    void claudeCodesEntryGoesToTheUserLevelWhenOnlyAProjectListedServers() throws IOException {
        String claude = "{\n  \"numStartups\": 1,\n  \"projects\": {\n    \"/home/me/app\": {\n      \"mcpServers\": {\n"
                + "        \"time\": {\"command\": \"uvx\", \"args\": [\"mcp-server-time\"]}\n      }\n    }\n  }\n}\n";
        write(home.resolve(".claude.json"), claude);

        assertThat(apply("--client", "claude-code")).as(stderr()).isEqualTo(ExitCode.OK);

        JsonNode written = JSONC.readTree(home.resolve(".claude.json").toFile());
        assertThat(names(written)).containsExactly("numStartups", "projects", "mcpServers");
        assertExecacheEntry(written.path("mcpServers").path("execache"), List.of("serve", "--config", config().toString()));
        assertThat(written.path("projects").path("/home/me/app").path("mcpServers").isEmpty()).isTrue();
        assertThat(run("setup", "--undo")).as(stderr()).isEqualTo(ExitCode.OK);
        assertThat(Files.readString(home.resolve(".claude.json"))).isEqualTo(claude);
    }

    @Test
    void xdgConfigHomeDecidesWhereTheConfigurationsAre() throws IOException {
        Path xdg = dir.resolve("xdg");
        write(xdg.resolve("zed/settings.json"), ZED);
        out.reset();
        err.reset();
        Map<String, String> env = Map.of("HOME", home.toString(), "XDG_CONFIG_HOME", xdg.toString(),
                "XDG_STATE_HOME", state.toString(), "PATH", "/usr/bin:/bin");

        int exit = Main.run(new String[] {"setup", "--apply", "--client", "zed", "--execache", execache.toString()}, env,
                project, new ByteArrayInputStream(new byte[0]), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));

        assertThat(exit).as(stderr()).isEqualTo(ExitCode.OK);
        assertThat(xdg.resolve("execache/execache.yaml")).exists();
        assertThat(Files.readString(xdg.resolve("zed/settings.json"))).contains(xdg.resolve("execache/execache.yaml").toString());
        assertThat(Files.readString(home.resolve(".config/zed/settings.json"))).isEqualTo(ZED);
        assertThat(config()).doesNotExist();
    }

    @Test
    void withoutExecacheNamedTheEntryStartsTheLauncherThisExecacheRunsFrom() {
        // the tests run from the checkout's app-cli classes: the checkout's ./execache is the launcher
        Path launcher = Path.of("").toAbsolutePath().getParent().resolve("execache");

        assertThat(run("setup", "--apply", "--dry-run", "--client", "cursor")).as(stderr()).isEqualTo(ExitCode.OK);

        assertThat(stdout()).contains("(" + launcher + " serve --config " + config() + ")");
    }

    @Test
    void aDamagedBackupManifestIsNamedWithItsLineAndNotQuoted() throws IOException {
        assertThat(apply()).as(stderr()).isEqualTo(ExitCode.OK);
        Path manifest = state.resolve("execache/setup/0001/manifest.json");
        Files.writeString(manifest, "{\"files\": [ghp_SECRET_in_the_manifest]}\n");

        assertThat(run("setup", "--undo")).isEqualTo(ExitCode.USAGE);

        assertThat(stderr()).startsWith("execache: setup: " + manifest + ": line 1, column ").contains("not valid JSON");
        assertNoSecretShown();
    }

    @Test
    void theEntryStartsTheCommandAsItWasStartedNpmsBinLinkNotTheFileItPointsTo() throws IOException {
        Path binLink = Files.createSymbolicLink(Files.createDirectories(dir.resolve("prefix/bin")).resolve("execache"),
                execache);
        moreEnv = Map.of("EXECACHE_INVOKED_AS", binLink.toString());

        assertThat(run("setup", "--apply", "--client", "cursor")).as(stderr()).isEqualTo(ExitCode.OK);

        JsonNode entry = JSONC.readTree(home.resolve(".cursor/mcp.json").toFile()).path("mcpServers").path("execache");
        assertThat(entry.path("command").asText()).isEqualTo(binLink.toString());
    }

    @Test
    void startedByNpxFromItsCacheTheEntryIsNpxWithThisVersion() throws IOException {
        Path cached = Files.createSymbolicLink(Files.createDirectories(
                dir.resolve("npm-cache/_npx/5f0c1b2a/node_modules/.bin")).resolve("execache"), execache);
        moreEnv = Map.of("EXECACHE_INVOKED_AS", cached.toString());

        assertThat(run("setup", "--apply", "--client", "cursor")).as(stderr()).isEqualTo(ExitCode.OK);

        JsonNode entry = JSONC.readTree(home.resolve(".cursor/mcp.json").toFile()).path("mcpServers").path("execache");
        assertThat(entry.path("command").asText()).isEqualTo("npx");
        assertThat(entry.path("args").get(0).asText()).isEqualTo("-y");
        assertThat(entry.path("args").get(1).asText()).matches("execache(@.+)?");
        assertThat(entry.path("args").get(2).asText()).isEqualTo("serve");
        assertThat(run("setup", "--client", "cursor")).isEqualTo(ExitCode.OK);
        assertThat(stdout()).as("it is execache itself: nothing to move").contains("Nothing to move");
    }

    @Test
    void helpExplainsTheCommand() {
        assertThat(run("setup", "--help")).isEqualTo(ExitCode.OK);

        assertThat(stdout()).contains("--apply").contains("--dry-run").contains("--undo").contains("--client")
                .contains("--server").contains("--config").contains("byte for byte").contains("never shown")
                .contains("its ${...} variables").doesNotContain("null");
    }
}
