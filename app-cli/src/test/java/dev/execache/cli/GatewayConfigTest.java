package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.execache.gateway.ToolCallRules;
import dev.execache.cli.settings.ConfigFile;
import dev.execache.cli.settings.GatewayConfig;
import dev.execache.cli.settings.UsageException;
import dev.execache.core.CachePolicy;
import dev.execache.core.ToolCacheRule;
import dev.execache.core.ToolValidator;
import dev.execache.core.spi.CatalogTool;
import dev.execache.tools.mcp.McpServerSettings;
import dev.execache.tools.mcp.UrlServerSettings;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** servers: and tool_calls: in execache.yaml, and the decisions they lead to. */
class GatewayConfigTest {
    @TempDir
    Path dir;

    private GatewayConfig parse(String yaml) {
        return ConfigFile.parse(yaml, dir.resolve("execache.yaml")).gateway();
    }

    @Test
    void serversTakeTheMcpServersShapeOfAgentHosts() {
        GatewayConfig config = parse("""
                servers:
                  memory:
                    command: npx
                    args: [-y, "@modelcontextprotocol/server-memory"]
                    env: {MEMORY_FILE_PATH: ./memory.jsonl}
                    cwd: sub
                  fs:
                    type: stdio
                    command: mcp-server-filesystem
                    trust_annotations: false
                    invalidate_on_write: none
                    share: public
                tool_calls:
                  rediscover_seconds: 5
                  rules:
                    - {tool: "fs__read_*", ttl_seconds: 60}
                    - {tool: "*__search_*", ttl_seconds: 30, max_entries: 50}
                    - {tool: "db__query", enabled: false}
                """);

        assertThat(config.servers()).hasSize(2);
        McpServerSettings memory = (McpServerSettings) config.servers().get(0).settings();
        assertThat(memory.args()).containsExactly("-y", "@modelcontextprotocol/server-memory");
        assertThat(memory.env()).containsEntry("MEMORY_FILE_PATH", "./memory.jsonl");
        assertThat(memory.cwd()).isEqualTo(dir.resolve("sub"));
        assertThat(memory.trustAnnotations()).isTrue();
        assertThat(config.servers().get(0).invalidateOnWrite()).isTrue();
        assertThat(config.servers().get(1).settings().trustAnnotations()).isFalse();
        assertThat(config.servers().get(1).invalidateOnWrite()).isFalse();
        assertThat(memory.sharePublic()).as("private by default").isFalse();
        assertThat(config.servers().get(1).settings().sharePublic()).isTrue();
        assertThat(config.rediscoverEvery()).isEqualTo(Duration.ofSeconds(5));
        assertThat(config.rules(CachePolicy.DEFAULTS)).containsExactly(
                ToolCacheRule.cache("fs__read_*", Duration.ofSeconds(60), CachePolicy.DEFAULT_MAX_ENTRIES),
                ToolCacheRule.cache("*__search_*", Duration.ofSeconds(30), 50),
                ToolCacheRule.cache("db__query", CachePolicy.DEFAULT_TTL, CachePolicy.DEFAULT_MAX_ENTRIES).enabled(false));
    }

    @Test
    void aUrlServerTakesItsHeaderVariablesFromTheEnvironmentOnly() {
        GatewayConfig config = parse("""
                servers:
                  github:
                    type: http
                    url: https://api.example.com/mcp?tenant=1
                    headers: {Authorization: "Bearer ${GITHUB_TOKEN}", X-Team: "${TEAM}-${REGION}"}
                    trust_annotations: false
                """);

        UrlServerSettings github = (UrlServerSettings) config.servers().get(0).settings();
        UrlServerSettings forCommand = github.startedFor(Map.of("GITHUB_TOKEN", "t0k", "TEAM", "core", "REGION", "eu"), dir);
        UrlServerSettings unset = github.startedFor(Map.of("GITHUB_TOKEN", "t0k"), dir);

        assertThat(github.url()).isEqualTo(URI.create("https://api.example.com/mcp?tenant=1"));
        assertThat(github.trustAnnotations()).isFalse();
        assertThat(forCommand.headerValues()).containsExactly(Map.entry("Authorization", "Bearer t0k"),
                Map.entry("X-Team", "core-eu"));
        assertThat(unset.variables()).containsExactly(Map.entry("GITHUB_TOKEN", true), Map.entry("TEAM", false),
                Map.entry("REGION", false));
        assertThatThrownBy(unset::headerValues).isInstanceOf(UrlServerSettings.UnsetVariableException.class)
                .hasMessage("server github: headers.X-Team names the environment variable TEAM, which is not set");
        assertThat(forCommand.toString()).doesNotContain("t0k").doesNotContain("tenant").contains("Authorization");
    }

    @Test
    void mistakesAreNamedByTheirKey() {
        assertThatThrownBy(() -> parse("servers: {a: {args: [x]}}"))
                .isInstanceOf(UsageException.class).hasMessageContaining("servers.a.command is required");
        assertThatThrownBy(() -> parse("servers: {a: {command: x, commnad: y}}"))
                .hasMessageContaining("unknown key 'servers.a.commnad'");
        assertThatThrownBy(() -> parse("servers: {a: {command: x, invalidate_on_write: all}}"))
                .hasMessageContaining("servers.a.invalidate_on_write must be server or none");
        assertThatThrownBy(() -> parse("servers: {a: {type: http, command: x}}"))
                .hasMessageContaining("servers.a.type is http: it needs url");
        assertThatThrownBy(() -> parse("servers: {a: {type: sse, url: \"https://example.com/mcp\"}}"))
                .hasMessageContaining("servers.a.type must be stdio (command, args, env, cwd) or http (url, headers):"
                        + " execache reaches url servers over Streamable HTTP, not SSE");
        assertThatThrownBy(() -> parse("servers: {a: {url: \"https://example.com/mcp\", command: x}}"))
                .isInstanceOf(UsageException.class)
                .hasMessageContaining("servers.a.command does not go with url");
        assertThatThrownBy(() -> parse("servers: {a: {command: x, headers: {A: b}}}"))
                .hasMessageContaining("servers.a.headers goes with url, not command");
        assertThatThrownBy(() -> parse("servers: {a: {url: \"ftp://example.com/mcp\"}}"))
                .hasMessageContaining("url must be http:// or https://");
        assertThatThrownBy(() -> parse("servers: {a: {url: \"https://example.com/mcp\", headers: {A: \"${B\"}}}"))
                .hasMessageContaining("headers.A has a '${' that is not a variable");
        assertThatThrownBy(() -> parse("servers: {a: {url: \"https://example.com/mcp\", oauth: {client_id: c,"
                + " client_secret: s, auth_method: private_key_jwt}}}"))
                .hasMessageContaining("oauth.auth_method must be client_secret_basic or client_secret_post");
        assertThatThrownBy(() -> parse("servers: {a__b: {command: x}}"))
                .hasMessageContaining("two underscores");
        assertThatThrownBy(() -> parse("tool_calls: {rules: [{ttl_seconds: 5}]}"))
                .hasMessageContaining("tool_calls.rules[0].tool is required");
        assertThatThrownBy(() -> parse("tool_calls: {rules: [{tool: a, ttl_seconds: 0}]}"))
                .hasMessageContaining("tool_calls.rules[0].ttl_seconds must be a positive whole number");
    }

    @Test
    void aRuleNamesItsValidatorByNameOrWithArgumentsTakenFromTheCall() {
        GatewayConfig config = parse("""
                tool_calls:
                  rules:
                    - tool: fs__read_text_file
                      ttl_seconds: 60
                      validate_with: {tool: fs__get_file_info, arguments: {path: "{path}", format: short}}
                    - {tool: "fs__read_media_file", validate_with: fs__get_file_info}
                    - {tool: "fs__list_directory"}
                """);

        assertThat(config.rules(CachePolicy.DEFAULTS).get(0).validator()).isEqualTo(new ToolValidator("fs__get_file_info",
                Map.of("path", "{path}", "format", "short")));
        assertThat(config.rules(CachePolicy.DEFAULTS).get(1).validator()).isEqualTo(ToolValidator.sameArguments("fs__get_file_info"));
        assertThat(config.rules(CachePolicy.DEFAULTS).get(2).validator()).isNull();
    }

    @Test
    void aValidatorThatCannotBeReadIsNamedByItsKey() {
        assertThatThrownBy(() -> parse("tool_calls: {rules: [{tool: a__b, validate_with: 3}]}"))
                .hasMessageContaining("tool_calls.rules[0].validate_with must be a tool's name, or {tool: NAME,"
                        + " arguments: {...}}, not a whole number");
        assertThatThrownBy(() -> parse("tool_calls: {rules: [{tool: a__b, validate_with: {arguments: {x: y}}}]}"))
                .hasMessageContaining("tool_calls.rules[0].validate_with.tool is required");
        assertThatThrownBy(() -> parse("tool_calls: {rules: [{tool: a__b, validate_with: {tool: a__c, args: {}}}]}"))
                .hasMessageContaining("tool_calls.rules[0].validate_with")
                .hasMessageContaining("args");
        assertThatThrownBy(() -> parse("tool_calls: {rules: [{tool: a__b, validate_with: \"a__*\"}]}"))
                .hasMessageContaining("tool_calls.rules[0].validate_with must name one tool exactly, as SERVER__TOOL"
                        + " (such as fs__get_file_info), not 'a__*'");
        assertThatThrownBy(() -> parse("tool_calls: {rules: [{tool: a__b, validate_with: {tool: info}}]}"))
                .hasMessageContaining("tool_calls.rules[0].validate_with.tool must name one tool exactly");
        assertThatThrownBy(() -> parse("tool_calls: {rules: [{tool: a__b, validate_with: {tool: a__c,"
                + " arguments: {path: \"dir/{path}\"}}}]}"))
                .hasMessageContaining("tool_calls.rules[0].validate_with.arguments.path must be one whole"
                        + " \"{NAME}\" to take the call's argument NAME, or a text without braces");
        assertThatThrownBy(() -> parse("tool_calls: {rules: [{tool: a__b, validate_with: {tool: a__c,"
                + " arguments: {path: 3}}}]}"))
                .hasMessageContaining("tool_calls.rules[0].validate_with.arguments.path must be \"{NAME}\"");
        assertThatThrownBy(() -> parse("tool_calls: {rules: [{tool: a__b, enabled: false, validate_with: a__c}]}"))
                .hasMessageContaining("tool_calls.rules[0].validate_with does not go with enabled: false");
    }

    @Test
    void aValidatorIsCheckedAgainstTheToolsTheServersOffer() {
        GatewayConfig config = parse("""
                tool_calls:
                  rules:
                    - {tool: fs__read_text_file, validate_with: {tool: fs__get_file_info, arguments: {path: "{path}"}}}
                    - {tool: fs__read_media_file, validate_with: fs__write_file}
                """);
        ToolCallRules rules = new ToolCallRules(config.rules(CachePolicy.DEFAULTS), CachePolicy.DEFAULTS);
        CatalogTool read = new CatalogTool("fs__read_text_file", "fs", "mcp:1", Map.of("name", "read_text_file",
                "inputSchema", Map.of("type", "object", "properties", Map.of("path", Map.of(), "head", Map.of()))),
                true, true);
        CatalogTool media = tool("fs__read_media_file", true, true);
        CatalogTool info = new CatalogTool("fs__get_file_info", "fs", "mcp:1", Map.of("name", "get_file_info",
                "inputSchema", Map.of("type", "object", "properties", Map.of("path", Map.of()),
                        "required", List.of("path"))), true, true);
        CatalogTool write = tool("fs__write_file", false, true);
        Map<String, CatalogTool> offered = Map.of(read.name(), read, media.name(), media, info.name(), info,
                write.name(), write);

        assertThat(rules.decide(read, offered).why())
                .isEqualTo("rule fs__read_text_file; revalidated by fs__get_file_info");
        assertThat(rules.decide(media, offered).why()).isEqualTo("rule fs__read_media_file; not revalidated:"
                + " validate_with fs__write_file may change something (its name says so): a validator must be read-only");
        assertThat(rules.decide(read, Map.of(read.name(), read)).why()).isEqualTo("rule fs__read_text_file; not"
                + " revalidated: validate_with fs__get_file_info is not a tool of any server");
    }

    private static CatalogTool tool(String name, Boolean readOnly, boolean trusted) {
        return new CatalogTool(name, name.substring(0, name.indexOf("__")), "mcp:1",
                Map.of("name", name.substring(name.indexOf("__") + 2)), readOnly, trusted);
    }

    @Test
    void aServersCacheAndTtlDecideUnderTheRulesThatNameTools() {
        GatewayConfig config = parse("""
                servers:
                  fs: {command: mcp-server-filesystem, cache: false}
                  web: {command: web-server, ttl: 90s}
                  db: {command: db-server, ttl_seconds: 30}
                  local: {command: local-server}
                  opted: {command: local-server, cache: true}
                  remote: {url: "https://example.com/mcp"}
                tool_calls:
                  rules:
                    - {tool: "fs__read_text_file", ttl_seconds: 10}
                    - {tool: "local__search", ttl_seconds: 20}
                """);
        ToolCallRules rules = new ToolCallRules(config.rules(CachePolicy.DEFAULTS), CachePolicy.DEFAULTS, config.policy(CachePolicy.DEFAULTS).servers());

        assertThat(rules.decide(tool("fs__read_text_file", true, true)))
                .isEqualTo(new ToolCallRules.Decision(true, "rule fs__read_text_file", Duration.ofSeconds(10)));
        assertThat(rules.decide(tool("fs__list_directory", true, true)))
                .isEqualTo(new ToolCallRules.Decision(false, "server fs: cache: false", null, true));
        assertThat(rules.decide(tool("web__fetch", true, true)))
                .isEqualTo(new ToolCallRules.Decision(true, "annotation readOnlyHint, server web: ttl",
                        Duration.ofSeconds(90), false));
        // a local server's reads are asked every time unless its entry, a rule or its hint says otherwise
        assertThat(rules.decide(tool("local__read", true, true)))
                .isEqualTo(new ToolCallRules.Decision(false, "a local server's read, asked every time so that a change"
                        + " on disk is seen at once; a rule, cache: true or a ttl on the server, or its cache_hint: cache"
                        + " caches it", null, true, true));
        assertThat(rules.decide(tool("local__search", true, true)).cached()).isTrue();
        assertThat(rules.decide(tool("opted__read", true, true)).cached()).isTrue();
        assertThat(rules.decide(tool("remote__read", true, true)).cached()).isTrue();
        assertThat(rules.decide(tool("db__query", true, true)).ttl()).isEqualTo(Duration.ofSeconds(30));
        // a server's name says nothing of what its tools do
        assertThat(rules.decide(tool("deployments__list_runs", true, true)).cached()).isTrue();
        assertThat(rules.decide(tool("writer__read_file", true, true)).cached()).isTrue();
        assertThat(rules.decide(tool("reader__write_file", true, true)).cached()).isFalse();
        assertThatThrownBy(() -> parse("tool_calls: {cache_when_slower_than: 0}"))
                .hasMessageContaining("tool_calls").hasMessageContaining("cache_when_slower_than");
        assertThatThrownBy(() -> parse("servers: {a: {command: x, ttl: 5, ttl_seconds: 5}}"))
                .hasMessageContaining("servers.a.ttl").hasMessageContaining("not both");
        assertThatThrownBy(() -> parse("servers: {a: {command: x, ttl: soon}}"))
                .hasMessageContaining("servers.a.ttl").hasMessageContaining("is not a duration");
        assertThatThrownBy(() -> parse("servers: {a: {command: x, cache: maybe}}"))
                .hasMessageContaining("servers.a.cache");
    }

    @Test
    void aRuleDecidesFirstThenATrustedReadOnlyHint() {
        ToolCallRules rules = new ToolCallRules(List.of(
                ToolCacheRule.cache("fs__read_*", Duration.ofSeconds(60), 10),
                ToolCacheRule.never("fs__read_secret")), CachePolicy.DEFAULTS);

        assertThat(rules.decide(tool("fs__read_file", true, true)))
                .isEqualTo(new ToolCallRules.Decision(true, "rule fs__read_*", Duration.ofSeconds(60)));
        assertThat(rules.decide(tool("fs__list_directory", true, true)))
                .isEqualTo(new ToolCallRules.Decision(true, "annotation readOnlyHint", CachePolicy.DEFAULT_TTL, false));
        assertThat(rules.decide(tool("fs__list_directory", true, false)).cached()).isFalse();
        assertThat(rules.decide(tool("fs__list_directory", true, false)).why()).isEqualTo("untrusted annotations, no rule");
        assertThat(rules.decide(tool("fs__read_file", null, false)).cached()).isTrue();
        assertThat(rules.decide(tool("fs__get_info", null, true)).why()).isEqualTo("not read-only (annotations)");
    }

    @Test
    void aWritingNameIsCachedOnlyByARuleThatNamesItExactly() {
        ToolCallRules broad = new ToolCallRules(List.of(ToolCacheRule.cache("*", Duration.ofSeconds(60), 10)),
                CachePolicy.DEFAULTS);
        ToolCallRules exact = new ToolCallRules(List.of(ToolCacheRule.cache("fs__write_file", Duration.ofSeconds(9), 10)),
                CachePolicy.DEFAULTS);

        for (String name : List.of("fs__write_file", "fs__edit_file", "db__create_table", "db__update_row",
                "db__delete_row", "fs__move_file", "ci__deploy", "sh__bash")) {
            assertThat(broad.decide(tool(name, true, true))).extracting(ToolCallRules.Decision::cached, ToolCallRules.Decision::why)
                    .containsExactly(false, "never-cache name");
        }
        assertThat(exact.decide(tool("fs__write_file", true, true)).cached()).isTrue();
        assertThat(exact.decide(tool("fs__write_file", true, true)).ttl()).isEqualTo(Duration.ofSeconds(9));
    }

    @Test
    void aUrlServerIsReachedAsEachAgentsPersonWithIdentityExchangeAndItsOAuthClient() {
        GatewayConfig config = parse("""
                servers:
                  tracker:
                    url: https://tracker.example.com/mcp
                    identity: exchange
                    oauth: {client_id: execache, client_secret: "${TRACKER_SECRET}"}
                  docs: {url: https://docs.example.com/mcp, identity: configured}
                """);

        UrlServerSettings tracker = (UrlServerSettings) config.servers().get(0).settings();
        UrlServerSettings docs = (UrlServerSettings) config.servers().get(1).settings();
        assertThat(tracker.identity()).isEqualTo(UrlServerSettings.Identity.EXCHANGE);
        assertThat(tracker.perPerson()).isTrue();
        assertThat(docs.perPerson()).isFalse();
        assertThatThrownBy(() -> parse("servers: {t: {url: \"https://t.example.com/mcp\", identity: someone}}"))
                .isInstanceOf(UsageException.class)
                .hasMessageContaining("servers.t.identity must be configured (reached with what the entry configures)"
                        + " or exchange (as each agent's person").hasMessageNotContaining("someone");
        assertThatThrownBy(() -> parse("servers: {t: {url: \"https://t.example.com/mcp\", identity: exchange}}"))
                .isInstanceOf(UsageException.class)
                .hasMessageContaining("servers.t: server t: identity: exchange needs oauth.client_id and"
                        + " oauth.client_secret");
        assertThatThrownBy(() -> parse("servers: {t: {url: \"https://t.example.com/mcp\", identity: exchange,"
                + " headers: {Authorization: \"Bearer ${T}\"}, oauth: {client_id: c, client_secret: s}}}"))
                .hasMessageContaining("remove the Authorization header");
        assertThatThrownBy(() -> parse("servers: {t: {command: x, identity: exchange}}"))
                .hasMessageContaining("servers.t.identity goes with url, not command");
    }

    @Test
    void shareIsPublicOrPrivate() {
        assertThatThrownBy(() -> parse("""
                servers:
                  docs: {command: docs-server, share: everyone}
                """)).isInstanceOf(UsageException.class)
                .hasMessageContaining("servers.docs.share must be private").hasMessageContaining("or public");
    }

    @Test
    void oneServersToolsMayGoWithoutThePrefixAndTwoMayNot() {
        GatewayConfig one = parse("""
                servers:
                  a: {command: x, prefix: false}
                  b: {command: y}
                """);

        assertThat(one.policy(CachePolicy.DEFAULTS).servers()).extracting(server -> server.name() + "=" + server.prefixed())
                .containsExactly("a=false", "b=true");
        assertThatThrownBy(() -> parse("servers: {a: {command: x, prefix: false}, b: {command: y, prefix: false}}"))
                .isInstanceOf(UsageException.class)
                .hasMessageContaining("servers.a.prefix and servers.b.prefix are all false")
                .hasMessageContaining("only one server's tools can be offered without the SERVER__ prefix");
        assertThatThrownBy(() -> parse("servers: {a: {command: x, prefix: \"no\"}}"))
                .isInstanceOf(UsageException.class).hasMessageContaining("servers.a.prefix must be true or false");
    }
}
