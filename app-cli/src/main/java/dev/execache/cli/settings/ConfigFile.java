package dev.execache.cli.settings;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.MissingNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.execache.core.CachePolicy;
import dev.execache.core.CanonicalJson;
import dev.execache.gateway.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The settings of {@code execache.yaml}, in the seed's shape. Every value is null when the
 * file does not set it. Unknown keys and wrong types are errors naming the key.
 *
 * <pre>
 * code_execution:
 *   cache: {enabled: true, max_entries: 100, ttl_seconds: 300, store: sqlite,
 *           sqlite_path: ..., redis_url: ..., require_store: false,
 *           redis_partitions: 16,           # the redis store's partitions: the same for the whole fleet
 *           cache_nondeterministic: true,   # store runs that used Date.now, Math.random, ...
 *           signing_key_file: ...}          # the fleet's signing keys (never the key itself here)
 *   timeout_seconds: 30
 *   memory_mb: 512
 *   allow_read: [./data]
 * tools:
 *   github: v1            # a version
 *   jira: {type: object}  # a JSON schema: its fingerprint is the version
 * servers: ...            # downstream MCP servers, see GatewayConfig
 * tool_calls: ...
 * serve: {http: "127.0.0.1:8080", ...}  # serve --http, see ServeHttp
 * expose: all            # what serve's tools/list holds: every server's tools too (all), or execache's own (code)
 * </pre>
 */
public record ConfigFile(
        Path path,
        Boolean enabled,
        Integer maxEntries,
        Integer ttlSeconds,
        String store,
        String sqlitePath,
        String redisUrl,
        Boolean requireStore,
        Integer timeoutSeconds,
        Integer memoryMb,
        List<String> allowRead,
        Map<String, String> tools,
        GatewayConfig gateway,
        Boolean cacheNondeterministic,
        String signingKeyFile,
        Integer redisPartitions,
        String expose) {

    public static final String DEFAULT_NAME = "execache.yaml";
    /**
     * Built on first use: most runs have no config file and should not pay for a YAML parser. A key given twice is an
     * error, not the last one's value: one of two server entries of the same name would vanish without a word.
     */
    private static final class Yaml {
        static final YAMLFactory FACTORY = YAMLFactory.builder().enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                .build();
    }
    private static final Set<String> TOP = Set.of("code_execution", "tools", "servers", "tool_calls", "serve",
            "expose");
    private static final Set<String> EXECUTION = Set.of("cache", "timeout_seconds", "memory_mb", "allow_read");
    private static final Set<String> CACHE = Set.of(
            "enabled", "max_entries", "ttl_seconds", "store", "sqlite_path", "redis_url", "require_store",
            "cache_nondeterministic", "signing_key_file", "redis_partitions");

    /**
     * Builds the YAML parser and reads a small document with it, for a command that will read a config file soon
     * (serve, on a thread of its own beside picocli): its classes and their setup are tens of milliseconds of serve's
     * start, before it can start the servers the file names.
     */
    public static void warmUp() {
        try {
            readTree("servers:\n  a: {command: a, args: [\"b\"], env: {C: d}, n: 1}\n");
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * A YAML document (the first, if the text holds more) as a JSON tree, missing when it is empty; a key given twice
     * in one mapping is an error. Read with Jackson's YAML parser into nodes made here, as {@code ObjectMapper.readTree}
     * makes them: an ObjectMapper's setup (its class's alone reads time zones and locales) was tens of milliseconds of
     * serve's start before it could start the servers the file names.
     */
    static JsonNode readTree(String text) throws IOException {
        try (JsonParser parser = Yaml.FACTORY.createParser(text)) {
            JsonToken first = parser.nextToken();
            return first == null ? MissingNode.getInstance() : node(parser, first);
        }
    }

    private static JsonNode node(JsonParser parser, JsonToken token) throws IOException {
        JsonNodeFactory nodes = JsonNodeFactory.instance;
        switch (token) {
            case START_OBJECT -> {
                ObjectNode object = nodes.objectNode();
                for (String name = parser.nextFieldName(); name != null; name = parser.nextFieldName()) {
                    object.set(name, node(parser, parser.nextToken()));
                }
                return object;
            }
            case START_ARRAY -> {
                ArrayNode array = nodes.arrayNode();
                for (JsonToken item = parser.nextToken(); item != JsonToken.END_ARRAY; item = parser.nextToken()) {
                    array.add(node(parser, item));
                }
                return array;
            }
            case VALUE_STRING -> {
                return nodes.textNode(parser.getText());
            }
            case VALUE_NUMBER_INT -> {
                return switch (parser.getNumberType()) {
                    case INT -> nodes.numberNode(parser.getIntValue());
                    case LONG -> nodes.numberNode(parser.getLongValue());
                    default -> nodes.numberNode(parser.getBigIntegerValue());
                };
            }
            case VALUE_NUMBER_FLOAT -> {
                return nodes.numberNode(parser.getDoubleValue());
            }
            case VALUE_TRUE, VALUE_FALSE -> {
                return nodes.booleanNode(token == JsonToken.VALUE_TRUE);
            }
            case VALUE_NULL -> {
                return nodes.nullNode();
            }
            case VALUE_EMBEDDED_OBJECT -> {
                Object embedded = parser.getEmbeddedObject();
                return embedded instanceof byte[] bytes ? nodes.binaryNode(bytes) : nodes.pojoNode(embedded);
            }
            default -> throw new JsonParseException(parser, "unexpected " + token);
        }
    }

    static ConfigFile empty() {
        return new ConfigFile(null, null, null, null, null, null, null, null, null, null, null, Map.of(), GatewayConfig.NONE, null, null, null, null);
    }

    /** Reads a file the user named: it must exist. */
    static ConfigFile read(Path path) {
        String text;
        try {
            text = Files.readString(path);
        } catch (NoSuchFileException e) {
            throw new UsageException("config file " + path + " does not exist");
        } catch (IOException e) {
            throw new UsageException("cannot read config file " + path + ": " + e.getMessage());
        }
        return parse(text, path);
    }

    public static ConfigFile parse(String text, Path path) {
        JsonNode root;
        try {
            root = readTree(text);
        } catch (JacksonException e) {
            throw new UsageException(ParseErrors.describe(path, "YAML", text, e));
        } catch (IOException e) {
            throw new UsageException("cannot read config file " + path + ": " + e.getMessage());
        }
        if (root == null || root.isMissingNode() || root.isNull()) {
            return new ConfigFile(path, null, null, null, null, null, null, null, null, null, null, Map.of(),
                    GatewayConfig.NONE, null, null, null, null);
        }
        Reader reader = new Reader(path);
        reader.requireObject(root, "(top level)", TOP);
        JsonNode execution = root.path("code_execution");
        JsonNode cache = execution.path("cache");
        if (!execution.isMissingNode()) {
            reader.requireObject(execution, "code_execution", EXECUTION);
        }
        if (!cache.isMissingNode()) {
            if (cache.has("signing_key")) {
                throw new UsageException(path + ": code_execution.cache.signing_key: the fleet's signing key never goes in"
                        + " the config file (config files are shared and committed); put it in a file only the fleet can"
                        + " read and name that file with signing_key_file, or set EXECACHE_SIGNING_KEY");
            }
            reader.requireObject(cache, "code_execution.cache", CACHE);
        }
        return new ConfigFile(
                path,
                reader.bool(cache, "code_execution.cache.enabled", "enabled"),
                reader.positiveInt(cache, "code_execution.cache.max_entries", "max_entries"),
                reader.positiveInt(cache, "code_execution.cache.ttl_seconds", "ttl_seconds"),
                reader.text(cache, "code_execution.cache.store", "store"),
                reader.text(cache, "code_execution.cache.sqlite_path", "sqlite_path"),
                reader.text(cache, "code_execution.cache.redis_url", "redis_url"),
                reader.bool(cache, "code_execution.cache.require_store", "require_store"),
                reader.positiveInt(execution, "code_execution.timeout_seconds", "timeout_seconds"),
                reader.positiveInt(execution, "code_execution.memory_mb", "memory_mb"),
                reader.textList(execution, "code_execution.allow_read", "allow_read"),
                reader.tools(root.path("tools")),
                GatewayConfig.parse(root, path),
                reader.bool(cache, "code_execution.cache.cache_nondeterministic", "cache_nondeterministic"),
                reader.text(cache, "code_execution.cache.signing_key_file", "signing_key_file"),
                reader.positiveInt(cache, "code_execution.cache.redis_partitions", "redis_partitions"),
                reader.text(root, "expose", "expose"));
    }

    /** The version of a tool described by a JSON schema: a fingerprint of its canonical form. */
    public static String schemaFingerprint(Object schema) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256")
                    .digest(CanonicalJson.write(schema, "schema").getBytes(StandardCharsets.UTF_8));
            return "schema:" + HexFormat.of().formatHex(digest, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private record Reader(Path path) {
        void requireObject(JsonNode node, String name, Set<String> known) {
            if (!node.isObject()) {
                throw error(name, "must be a mapping");
            }
            Iterator<String> names = node.fieldNames();
            while (names.hasNext()) {
                String key = names.next();
                if (!known.contains(key)) {
                    String prefix = name.equals("(top level)") ? "" : name + ".";
                    throw new UsageException(path + ": unknown key '" + prefix + key + "' (known here: "
                            + String.join(", ", new TreeSet<>(known)) + ")");
                }
            }
        }

        Boolean bool(JsonNode parent, String name, String field) {
            JsonNode node = parent.path(field);
            if (node.isMissingNode() || node.isNull()) {
                return null;
            }
            if (!node.isBoolean()) {
                throw error(name, "must be true or false, not " + ParseErrors.kindOf(node));
            }
            return node.booleanValue();
        }

        Integer positiveInt(JsonNode parent, String name, String field) {
            JsonNode node = parent.path(field);
            if (node.isMissingNode() || node.isNull()) {
                return null;
            }
            if (!node.isIntegralNumber() || node.longValue() < 1 || node.longValue() > Integer.MAX_VALUE) {
                throw error(name, "must be a positive whole number, not " + ParseErrors.kindOf(node));
            }
            return node.intValue();
        }

        String text(JsonNode parent, String name, String field) {
            JsonNode node = parent.path(field);
            if (node.isMissingNode() || node.isNull()) {
                return null;
            }
            if (!node.isTextual() || node.textValue().isBlank()) {
                throw error(name, "must be a non-empty string, not " + ParseErrors.kindOf(node));
            }
            return node.textValue();
        }

        List<String> textList(JsonNode parent, String name, String field) {
            JsonNode node = parent.path(field);
            if (node.isMissingNode() || node.isNull()) {
                return null;
            }
            if (!node.isArray()) {
                throw error(name, "must be a list of paths, not " + ParseErrors.kindOf(node));
            }
            List<String> values = new ArrayList<>();
            for (JsonNode item : node) {
                if (!item.isTextual() || item.textValue().isBlank()) {
                    throw error(name, "must hold only non-empty paths, not " + ParseErrors.kindOf(item));
                }
                values.add(item.textValue());
            }
            return values;
        }

        Map<String, String> tools(JsonNode node) {
            if (node.isMissingNode() || node.isNull()) {
                return Map.of();
            }
            if (!node.isObject()) {
                throw error("tools", "must map each tool name to a version or a JSON schema");
            }
            Map<String, String> tools = new TreeMap<>();
            node.fields().forEachRemaining(tool -> {
                JsonNode value = tool.getValue();
                String name = "tools." + tool.getKey();
                if (value.isTextual() && !value.textValue().isBlank()) {
                    tools.put(tool.getKey(), value.textValue());
                } else if (value.isNumber()) {
                    tools.put(tool.getKey(), value.asText());
                } else if (value.isObject()) {
                    tools.put(tool.getKey(), schemaFingerprint(Json.MAPPER.convertValue(value, Map.class)));
                } else {
                    throw error(name, "must be a version string or a JSON schema object, not " + ParseErrors.kindOf(value));
                }
            });
            return tools;
        }

        UsageException error(String name, String problem) {
            return new UsageException(path + ": " + name + " " + problem);
        }
    }
}
