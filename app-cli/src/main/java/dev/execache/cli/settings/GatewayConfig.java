package dev.execache.cli.settings;

import com.fasterxml.jackson.databind.JsonNode;
import dev.execache.core.CachePolicy;
import dev.execache.core.Limits;
import dev.execache.core.ToolCacheRule;
import dev.execache.core.ToolValidator;
import dev.execache.gateway.GatewayPolicy;
import dev.execache.tools.mcp.DownstreamSettings;
import dev.execache.tools.mcp.McpServerSettings;
import dev.execache.tools.mcp.UrlServerSettings;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The downstream MCP servers {@code serve} sits in front of, and how their tool calls are cached.
 *
 * <pre>
 * servers:                  # the mcpServers shape of agent hosts
 *   memory:
 *     command: npx
 *     args: [-y, "@modelcontextprotocol/server-memory"]
 *     env: {MEMORY_FILE_PATH: ./memory.jsonl}
 *     cwd: .                 # relative to the config file
 *     trust_annotations: true     # readOnlyHint decides what is cached (default true)
 *     invalidate_on_write: server # a call that may write drops the server's cached reads; none: keep them
 *     code_access: true           # code may call its tools as tools.SERVER.TOOL(args) (default true)
 *     share: private              # answers shared only by identical configurations; public: by every one
 *     prefix: true                # its tools offered as SERVER__TOOL; false: under their own names (one server)
 *     cache: true                 # its read-only tools cached (a command server's are asked every time unless
 *                                 # this, a ttl, a rule or the server's cache_hint says so); false: never cached
 *     ttl: 60s                    # how long its answers are kept when no rule names the tool (or ttl_seconds: 60)
 *   github:                 # a server reached over Streamable HTTP
 *     url: https://api.githubcopilot.com/mcp/
 *     headers: {Authorization: "Bearer ${GITHUB_TOKEN}"}   # ${VAR}: from the environment only
 *     oauth: {client_id: id, client_secret: "${SECRET}", scope: read, auth_method: client_secret_basic}
 *     identity: configured    # reached with what the entry configures; exchange: as each agent's person under
 *                             # serve --http with OAuth, their token exchanged (RFC 8693) with the oauth client
 * tool_calls:
 *   rediscover_seconds: 60
 *   max_per_run: 1000        # tool calls one run of code may make
 *   max_bytes_per_run: 67108864  # bytes those calls may return in all
 *   rules:                   # globs on SERVER__TOOL, first match wins
 *     - {tool: "fs__read_*", ttl_seconds: 60}
 *     - {tool: "*__search_*", ttl_seconds: 30, max_entries: 50}
 *     - {tool: "db__query", enabled: false}
 *     - {tool: "fs__read_text_file", ttl_seconds: 60,   # an expired answer is revalidated by a cheap call:
 *        validate_with: {tool: "fs__get_file_info", arguments: {path: "{path}"}}}  # {NAME}: the call's argument
 * </pre>
 */
public record GatewayConfig(List<Server> servers, List<Rule> rules, Duration rediscoverEvery, int maxCallsPerRun,
        long maxBytesPerRun) {
    static final Duration DEFAULT_REDISCOVER = Duration.ofSeconds(60);
    static final GatewayConfig NONE = new GatewayConfig(List.of(), List.of(), DEFAULT_REDISCOVER);
    private static final Set<String> SERVER_KEYS = Set.of(
            "command", "args", "env", "cwd", "type", "url", "headers", "oauth", "trust_annotations", "invalidate_on_write",
            "code_access", "share", "prefix", "cache", "ttl", "ttl_seconds", "identity");
    private static final Set<String> OAUTH_KEYS = Set.of("client_id", "client_secret", "scope", "auth_method");
    private static final Set<String> TOOL_CALL_KEYS = Set.of("rediscover_seconds", "rules", "max_per_run",
            "max_bytes_per_run");
    private static final Set<String> RULE_KEYS = Set.of("tool", "enabled", "ttl_seconds", "max_entries", "validate_with");
    private static final Set<String> VALIDATOR_KEYS = Set.of("tool", "arguments");

    /**
     * One server, what a call to it that may write does to its cached reads, and whether code
     * may call its tools.
     */
    /**
     * @param prefixed whether its tools are offered as {@code SERVER__TOOL}
     * @param cache whether its answers may be cached at all
     * @param ttl how long its answers are kept when no rule names the tool; null for the cache's TTL
     * @param readsFresh whether its read-only tools are asked every time unless a rule names them or its answers say
     *     {@code cache_hint: cache}: a command server whose entry gives neither {@code cache: true} nor a {@code ttl}
     */
    public record Server(DownstreamSettings settings, boolean invalidateOnWrite, boolean codeAccess, boolean prefixed,
            boolean cache, Duration ttl, boolean readsFresh) {
        public Server(DownstreamSettings settings, boolean invalidateOnWrite, boolean codeAccess, boolean prefixed,
                boolean cache, Duration ttl) {
            this(settings, invalidateOnWrite, codeAccess, prefixed, cache, ttl, false);
        }

        public Server(DownstreamSettings settings, boolean invalidateOnWrite, boolean codeAccess, boolean prefixed) {
            this(settings, invalidateOnWrite, codeAccess, prefixed, true, null);
        }

        public Server(DownstreamSettings settings, boolean invalidateOnWrite) {
            this(settings, invalidateOnWrite, true);
        }

        public Server(DownstreamSettings settings, boolean invalidateOnWrite, boolean codeAccess) {
            this(settings, invalidateOnWrite, codeAccess, true);
        }
    }

    /**
     * A rule as written: a TTL or bound it does not give is the cache's ({@code --ttl}, {@code EXECACHE_TTL},
     * {@code code_execution.cache.ttl_seconds}, the default), resolved where those settings meet.
     *
     * @param ttl null for the cache's TTL
     * @param maxEntries null for the cache's bound
     */
    public record Rule(String tool, boolean enabled, Duration ttl, Integer maxEntries, ToolValidator validator) {
        /** A rule that gives everything itself. */
        public static Rule of(ToolCacheRule rule) {
            return new Rule(rule.toolGlob(), rule.enabled(), rule.ttl(), rule.maxEntries(), rule.validator());
        }

        ToolCacheRule resolve(CachePolicy cache) {
            return ToolCacheRule.cache(tool, ttl == null ? cache.ttl() : ttl,
                    maxEntries == null ? cache.maxEntries() : maxEntries).enabled(enabled).validatedBy(validator);
        }
    }

    public GatewayConfig {
        servers = List.copyOf(servers);
        rules = List.copyOf(rules);
    }

    /** With rules that give their own TTL and bound. */
    public GatewayConfig(List<Server> servers, List<ToolCacheRule> rules, Duration rediscoverEvery) {
        this(servers, rules.stream().map(Rule::of).toList(), rediscoverEvery, Limits.DEFAULT_MAX_TOOL_CALLS,
                Limits.DEFAULT_MAX_TOOL_BYTES);
    }

    /** This configuration with only the servers named here. */
    public GatewayConfig withOnlyServers(Set<String> names) {
        return new GatewayConfig(servers.stream().filter(server -> names.contains(server.settings().name())).toList(),
                rules, rediscoverEvery, maxCallsPerRun, maxBytesPerRun);
    }

    public boolean isEmpty() {
        return servers.isEmpty();
    }

    /** The rules, a TTL or bound a rule does not give taken from {@code cache}. */
    public List<ToolCacheRule> rules(CachePolicy cache) {
        return rules.stream().map(rule -> rule.resolve(cache)).toList();
    }

    /** What the gateway needs of this: the rules (resolved against {@code cache}), and each server's name and flags. */
    public GatewayPolicy policy(CachePolicy cache) {
        return new GatewayPolicy(servers.stream()
                .map(server -> new GatewayPolicy.Server(server.settings().name(), server.invalidateOnWrite(),
                        server.codeAccess(), server.prefixed(), server.cache(), server.ttl(), server.readsFresh()))
                .toList(), rules(cache));
    }

    /**
     * Reads {@code servers:} and {@code tool_calls:} of a parsed config file.
     */
    static GatewayConfig parse(JsonNode root, Path file) {
        Path base = file == null || file.toAbsolutePath().getParent() == null ? Path.of("").toAbsolutePath()
                : file.toAbsolutePath().getParent();
        List<Server> servers = new ArrayList<>();
        JsonNode serversNode = root.path("servers");
        if (!serversNode.isMissingNode() && !serversNode.isNull()) {
            if (!serversNode.isObject()) {
                throw error(file, "servers", "must map each server's name to its command, args, env and cwd");
            }
            Iterator<Map.Entry<String, JsonNode>> entries = serversNode.fields();
            while (entries.hasNext()) {
                Map.Entry<String, JsonNode> entry = entries.next();
                servers.add(server(entry.getKey(), entry.getValue(), file, base));
            }
            List<String> unprefixed = servers.stream().filter(server -> !server.prefixed())
                    .map(server -> "servers." + server.settings().name() + ".prefix").toList();
            if (unprefixed.size() > 1) {
                throw error(file, String.join(" and ", unprefixed), "are all false: only one server's tools can be"
                        + " offered without the SERVER__ prefix, or their names could collide");
            }
        }
        JsonNode toolCalls = root.path("tool_calls");
        List<Rule> rules = new ArrayList<>();
        Duration rediscover = DEFAULT_REDISCOVER;
        int maxCalls = Limits.DEFAULT_MAX_TOOL_CALLS;
        long maxBytes = Limits.DEFAULT_MAX_TOOL_BYTES;
        if (!toolCalls.isMissingNode() && !toolCalls.isNull()) {
            requireKeys(toolCalls, "tool_calls", TOOL_CALL_KEYS, file);
            if (!toolCalls.path("max_per_run").isMissingNode()) {
                maxCalls = (int) positive(toolCalls.path("max_per_run"), "tool_calls.max_per_run", file);
            }
            if (!toolCalls.path("max_bytes_per_run").isMissingNode()) {
                maxBytes = positive(toolCalls.path("max_bytes_per_run"), "tool_calls.max_bytes_per_run", file);
            }
            JsonNode seconds = toolCalls.path("rediscover_seconds");
            if (!seconds.isMissingNode()) {
                rediscover = Duration.ofSeconds(positive(seconds, "tool_calls.rediscover_seconds", file));
            }
            JsonNode rulesNode = toolCalls.path("rules");
            if (!rulesNode.isMissingNode() && !rulesNode.isNull()) {
                if (!rulesNode.isArray()) {
                    throw error(file, "tool_calls.rules", "must be a list of rules, each with a tool glob");
                }
                Set<String> globs = new TreeSet<>();
                int index = 0;
                for (JsonNode rule : rulesNode) {
                    String name = "tool_calls.rules[" + index++ + "]";
                    Rule parsed = rule(rule, name, file);
                    if (!globs.add(parsed.tool())) {
                        throw error(file, name, "repeats the tool glob '" + parsed.tool() + "'");
                    }
                    rules.add(parsed);
                }
            }
        }
        return new GatewayConfig(servers, rules, rediscover, maxCalls, maxBytes);
    }

    private static Server server(String name, JsonNode node, Path file, Path base) {
        String where = "servers." + name;
        requireKeys(node, where, SERVER_KEYS, file);
        JsonNode type = node.path("type");
        boolean byUrl = !node.path("url").isMissingNode();
        if (!type.isMissingNode() && !Set.of("stdio", "http", "streamable-http", "streamableHttp").contains(type.asText())) {
            throw error(file, where + ".type", "must be stdio (command, args, env, cwd) or http (url, headers)"
                    + (type.asText().equalsIgnoreCase("sse") ? ": execache reaches url servers over Streamable HTTP, not SSE"
                    : ""));
        }
        if (!type.isMissingNode() && type.asText().equals("stdio") == byUrl) {
            throw error(file, where + ".type", type.asText().equals("stdio") ? "stdio does not go with url" : "is http: it needs url");
        }
        boolean trust = bool(node.path("trust_annotations"), where + ".trust_annotations", file, true);
        boolean invalidateOnWrite = true;
        JsonNode onWrite = node.path("invalidate_on_write");
        if (!onWrite.isMissingNode() && !onWrite.isNull()) {
            String value = onWrite.asText();
            if (!value.equals("server") && !value.equals("none")) {
                throw error(file, where + ".invalidate_on_write", "must be server or none, not "
                        + ParseErrors.kindOf(onWrite));
            }
            invalidateOnWrite = value.equals("server");
        }
        boolean codeAccess = bool(node.path("code_access"), where + ".code_access", file, true);
        boolean prefixed = bool(node.path("prefix"), where + ".prefix", file, true);
        boolean cache = bool(node.path("cache"), where + ".cache", file, true);
        Duration ttl = null;
        if (!node.path("ttl").isMissingNode() && !node.path("ttl_seconds").isMissingNode()) {
            throw error(file, where + ".ttl", "give ttl or ttl_seconds, not both");
        }
        if (!node.path("ttl").isMissingNode()) {
            ttl = Durations.parseInFile(node.path("ttl").asText(), file + ": " + where + ".ttl");
        } else if (!node.path("ttl_seconds").isMissingNode()) {
            ttl = Duration.ofSeconds(positive(node.path("ttl_seconds"), where + ".ttl_seconds", file));
        }
        boolean sharePublic = false;
        JsonNode share = node.path("share");
        if (!share.isMissingNode() && !share.isNull()) {
            if (!share.isTextual() || !(share.textValue().equals("public") || share.textValue().equals("private"))) {
                throw error(file, where + ".share", "must be private (answers shared only by identical configurations)"
                        + " or public (its answers do not depend on who asks), not " + ParseErrors.kindOf(share));
            }
            sharePublic = share.textValue().equals("public");
        }
        DownstreamSettings settings;
        try {
            settings = byUrl ? urlServer(name, node, where, file, trust).withSharePublic(sharePublic)
                    : commandServer(name, node, where, file, base, trust).withSharePublic(sharePublic);
        } catch (IllegalArgumentException e) {
            throw new UsageException(file + ": " + where + ": " + e.getMessage());
        }
        // a local server's reads are asked every time unless its entry asks for them to be cached
        boolean readsFresh = !byUrl && cache && node.path("cache").isMissingNode() && ttl == null;
        return new Server(settings, invalidateOnWrite, codeAccess, prefixed, cache, ttl, readsFresh);
    }

    private static UrlServerSettings urlServer(String name, JsonNode node, String where, Path file, boolean trust) {
        for (String commandKey : List.of("command", "args", "env", "cwd")) {
            if (!node.path(commandKey).isMissingNode()) {
                throw error(file, where + "." + commandKey, "does not go with url: a server is a command or a url");
            }
        }
        String url = text(node.path("url"), where + ".url", file);
        URI uri;
        try {
            uri = new URI(url);
        } catch (URISyntaxException e) {
            throw error(file, where + ".url", "is not a URL: " + e.getReason() + " at character " + (e.getIndex() + 1));
        }
        Map<String, String> headers = strings(node.path("headers"), where + ".headers", file);
        UrlServerSettings.ClientCredentials oauth = null;
        JsonNode oauthNode = node.path("oauth");
        if (!oauthNode.isMissingNode() && !oauthNode.isNull()) {
            requireKeys(oauthNode, where + ".oauth", OAUTH_KEYS, file);
            oauth = new UrlServerSettings.ClientCredentials(text(oauthNode.path("client_id"), where + ".oauth.client_id", file),
                    text(oauthNode.path("client_secret"), where + ".oauth.client_secret", file),
                    text(oauthNode.path("scope"), where + ".oauth.scope", file),
                    text(oauthNode.path("auth_method"), where + ".oauth.auth_method", file));
        }
        UrlServerSettings.Identity identity = UrlServerSettings.Identity.CONFIGURED;
        JsonNode identityNode = node.path("identity");
        if (!identityNode.isMissingNode() && !identityNode.isNull()) {
            if (!identityNode.isTextual() || !(identityNode.textValue().equals("configured")
                    || identityNode.textValue().equals("exchange"))) {
                throw error(file, where + ".identity", "must be configured (reached with what the entry configures) or"
                        + " exchange (as each agent's person, their token exchanged with the entry's oauth client), not "
                        + ParseErrors.kindOf(identityNode));
            }
            identity = UrlServerSettings.Identity.of(identityNode.textValue());
        }
        return new UrlServerSettings(name, uri, headers, trust, oauth, null, false, identity);
    }

    private static Map<String, String> strings(JsonNode node, String where, Path file) {
        Map<String, String> values = new LinkedHashMap<>();
        if (!node.isMissingNode() && !node.isNull()) {
            if (!node.isObject()) {
                throw error(file, where, "must map names to values");
            }
            node.fields().forEachRemaining(value -> {
                if (!value.getValue().isValueNode() || value.getValue().isNull()) {
                    throw error(file, where + "." + value.getKey(), "must be a string");
                }
                values.put(value.getKey(), value.getValue().asText());
            });
        }
        return values;
    }

    private static McpServerSettings commandServer(String name, JsonNode node, String where, Path file, Path base,
            boolean trust) {
        for (String urlKey : List.of("headers", "oauth", "identity")) {
            if (!node.path(urlKey).isMissingNode()) {
                throw error(file, where + "." + urlKey, "goes with url, not command");
            }
        }
        String command = text(node.path("command"), where + ".command", file);
        if (command == null) {
            throw error(file, where + ".command", "is required: the program that starts the server");
        }
        List<String> args = new ArrayList<>();
        JsonNode argsNode = node.path("args");
        if (!argsNode.isMissingNode() && !argsNode.isNull()) {
            if (!argsNode.isArray()) {
                throw error(file, where + ".args", "must be a list of strings");
            }
            for (JsonNode arg : argsNode) {
                if (!arg.isValueNode() || arg.isNull()) {
                    throw error(file, where + ".args", "must hold only strings, not " + ParseErrors.kindOf(arg));
                }
                args.add(arg.asText());
            }
        }
        Map<String, String> env = strings(node.path("env"), where + ".env", file);
        String cwd = text(node.path("cwd"), where + ".cwd", file);
        return new McpServerSettings(name, command, args, env, cwd == null ? null : base.resolve(cwd), trust);
    }

    private static Rule rule(JsonNode node, String name, Path file) {
        requireKeys(node, name, RULE_KEYS, file);
        String glob = text(node.path("tool"), name + ".tool", file);
        if (glob == null) {
            throw error(file, name + ".tool", "is required: a glob on SERVER__TOOL such as fs__read_*");
        }
        boolean enabled = bool(node.path("enabled"), name + ".enabled", file, true);
        JsonNode ttl = node.path("ttl_seconds");
        JsonNode max = node.path("max_entries");
        ToolValidator validator = validator(node.path("validate_with"), name + ".validate_with", file);
        if (validator != null && !enabled) {
            throw error(file, name + ".validate_with", "does not go with enabled: false (nothing is cached to revalidate)");
        }
        Rule parsed = new Rule(glob, enabled,
                ttl.isMissingNode() ? null : Duration.ofSeconds(positive(ttl, name + ".ttl_seconds", file)),
                max.isMissingNode() ? null : (int) positive(max, name + ".max_entries", file), validator);
        try {
            parsed.resolve(CachePolicy.DEFAULTS);
        } catch (IllegalArgumentException e) {
            throw error(file, name + ".tool", e.getMessage());
        }
        return parsed;
    }

    /**
     * A rule's {@code validate_with}: a tool's name (asked with the call's own arguments), or
     * {@code {tool: NAME, arguments: {NAME: "{CALL_ARGUMENT}" or text}}}; null when absent. Whether
     * the tool exists and is read-only is checked against the servers' tools when they are known.
     */
    private static ToolValidator validator(JsonNode node, String name, Path file) {
        if (node.isMissingNode() || node.isNull()) {
            return null;
        }
        String tool;
        Map<String, String> arguments = new LinkedHashMap<>();
        if (node.isTextual()) {
            tool = text(node, name, file);
        } else if (node.isObject()) {
            requireKeys(node, name, VALIDATOR_KEYS, file);
            tool = text(node.path("tool"), name + ".tool", file);
            if (tool == null) {
                throw error(file, name + ".tool", "is required: the SERVER__TOOL that validates, such as fs__get_file_info");
            }
            JsonNode given = node.path("arguments");
            if (!given.isMissingNode() && !given.isNull()) {
                if (!given.isObject() || given.isEmpty()) {
                    throw error(file, name + ".arguments", "must map each of the validator's arguments to \"{NAME}\""
                            + " (the call's argument NAME) or to a text, not " + ParseErrors.kindOf(given)
                            + " (leave it out to pass the call's own arguments)");
                }
                Iterator<Map.Entry<String, JsonNode>> fields = given.fields();
                while (fields.hasNext()) {
                    Map.Entry<String, JsonNode> field = fields.next();
                    String where = name + ".arguments." + field.getKey();
                    if (!field.getValue().isTextual()) {
                        throw error(file, where, "must be \"{NAME}\" (the call's argument NAME) or a text, not "
                                + ParseErrors.kindOf(field.getValue()));
                    }
                    String value = field.getValue().textValue();
                    if (ToolValidator.placeholder(value).isEmpty() && (value.contains("{") || value.contains("}"))) {
                        throw error(file, where, "must be one whole \"{NAME}\" to take the call's"
                                + " argument NAME, or a text without braces");
                    }
                    arguments.put(field.getKey(), value);
                }
            }
        } else {
            throw error(file, name, "must be a tool's name, or {tool: NAME, arguments: {...}}, not "
                    + ParseErrors.kindOf(node));
        }
        if (tool.contains("*") || tool.contains("?") || !tool.contains("__")) {
            throw error(file, name + (node.isObject() ? ".tool" : ""), "must name one tool exactly, as SERVER__TOOL"
                    + " (such as fs__get_file_info), not '" + tool + "'");
        }
        return new ToolValidator(tool, arguments);
    }

    private static void requireKeys(JsonNode node, String name, Set<String> known, Path file) {
        if (!node.isObject()) {
            throw error(file, name, "must be a mapping");
        }
        node.fieldNames().forEachRemaining(key -> {
            if (!known.contains(key)) {
                throw new UsageException(file + ": unknown key '" + name + "." + key + "' (known here: "
                        + String.join(", ", new TreeSet<>(known)) + ")");
            }
        });
    }

    private static String text(JsonNode node, String name, Path file) {
        if (node.isMissingNode() || node.isNull()) {
            return null;
        }
        if (!node.isTextual() || node.textValue().isBlank()) {
            throw error(file, name, "must be a non-empty string, not " + ParseErrors.kindOf(node));
        }
        return node.textValue();
    }

    private static boolean bool(JsonNode node, String name, Path file, boolean otherwise) {
        if (node.isMissingNode() || node.isNull()) {
            return otherwise;
        }
        if (!node.isBoolean()) {
            throw error(file, name, "must be true or false, not " + ParseErrors.kindOf(node));
        }
        return node.booleanValue();
    }

    private static long positive(JsonNode node, String name, Path file) {
        if (!node.isIntegralNumber() || node.longValue() < 1 || node.longValue() > Integer.MAX_VALUE) {
            throw error(file, name, "must be a positive whole number, not " + ParseErrors.kindOf(node));
        }
        return node.longValue();
    }

    private static UsageException error(Path file, String name, String problem) {
        return new UsageException((file == null ? "config" : file.toString()) + ": " + name + " " + problem);
    }
}
