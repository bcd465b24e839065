package dev.execache.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.core.Freshness;
import dev.execache.core.ToolCallOutcome;
import dev.execache.core.spi.ResultTtl;
import dev.execache.core.spi.ServerRefusedException;
import dev.execache.core.spi.ToolCatalog;
import io.modelcontextprotocol.spec.McpSchema;
import com.fasterxml.jackson.core.type.TypeReference;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The servers' resources, prompts and completion, passed through: each list asks every server that offers the
 * feature (all its pages) and notes who owns each URI, template and prompt, so that a read, a get or a completion
 * goes to that server. A URI or template two servers list is offered for the first (in the servers' order) only,
 * and serve logs which was left out; a prompt is offered as {@code SERVER__PROMPT}, or under its own name for a
 * server configured with {@code prefix: false}. Reads ({@code resources/read}, {@code prompts/get}) go through the
 * gateway's cache ({@link ServerReads#read}); lists carry the servers' own cache hints made one ({@link ListHints}).
 */
public final class ServerFeatures {
    public static final Set<String> METHODS = Set.of(McpSchema.METHOD_RESOURCES_LIST, McpSchema.METHOD_RESOURCES_TEMPLATES_LIST,
            McpSchema.METHOD_RESOURCES_READ, McpSchema.METHOD_PROMPT_LIST, McpSchema.METHOD_PROMPT_GET,
            McpSchema.METHOD_COMPLETION_COMPLETE, McpSchema.METHOD_RESOURCES_SUBSCRIBE,
            McpSchema.METHOD_RESOURCES_UNSUBSCRIBE);
    /** The initialize era's error for a resource nobody has (the 2026-07-28 era says -32602, StatelessProtocol). */
    public static final int RESOURCE_NOT_FOUND = -32002;
    private static final System.Logger LOG = System.getLogger("dev.execache.mcp.server");
    private static final int MAX_PAGES = 100;
    private static final TypeReference<Map<String, Object>> OBJECT = new TypeReference<>() {
    };

    private final ToolCatalog catalog;
    private final StartingServers starting;
    private final Set<String> unprefixed;
    private final Reader reader;
    private final Clock clock;
    /** The server each URI and template is offered as, in the servers' order: replaced whole by each list. */
    private volatile Map<String, String> resourceOwners = Map.of();
    private volatile Map<String, String> templateOwners = Map.of();
    private final Map<String, Prompt> prompts = new ConcurrentHashMap<>();
    /** What was warned of already, so that a list asked again does not log it again. */
    private final Set<String> warned = ConcurrentHashMap.newKeySet();

    private record Prompt(String server, String name) {
    }

    /** Answers a read through the cache (see {@link ServerReads#read}). */
    @FunctionalInterface
    interface Reader {
        ToolCallOutcome read(String server, String method, Map<String, Object> params, String agent, Freshness freshness);
    }

    ServerFeatures(ToolCatalog catalog, StartingServers starting, Set<String> unprefixed, Reader reader, Clock clock) {
        this.catalog = catalog;
        this.starting = starting;
        this.unprefixed = Set.copyOf(unprefixed);
        this.reader = reader;
        this.clock = clock;
    }

    /**
     * Which of resources, prompts and completions at least one connected server offers; all three while a
     * server is still starting, since serve answers {@code initialize} before its servers are up and a
     * client does not ask for what was not declared (the lists are then empty until a server offers some).
     */
    public Set<String> offered() {
        if (starting.any()) {
            return Set.of("resources", "prompts", "completions");
        }
        Set<String> offered = new LinkedHashSet<>();
        catalog.features().values().forEach(offered::addAll);
        return offered;
    }

    /** Waits for the servers still starting, each at most its start time, as tools/list does. */
    private void awaitStartingServers(String method) {
        try {
            starting.awaitAll();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ServerRefusedException(McpSchema.ErrorCodes.INTERNAL_ERROR, method + " was cancelled while the"
                    + " servers behind execache were starting");
        }
    }

    /**
     * The result of one of {@link #METHODS}; a server's error, or a name or URI nobody owns, is thrown.
     *
     * @param agent who asked (see {@link dev.execache.core.Agents}), counted with a read; null: nobody named
     */
    public ObjectNode answer(String method, ObjectNode params, String agent) {
        awaitStartingServers(method);
        ObjectNode asked = params.deepCopy();
        // the agent's envelope and tokens are its own with execache, not the server's
        asked.remove("_meta");
        return switch (method) {
            case McpSchema.METHOD_RESOURCES_LIST -> listResources(method);
            case McpSchema.METHOD_RESOURCES_TEMPLATES_LIST -> listTemplates(method);
            case McpSchema.METHOD_RESOURCES_READ ->
                    read(resourceOwner(asked.get("uri").textValue()), method, asked, params, agent);
            // the server's notifications/resources/updated then reach the agent as it sent them (URIs are not renamed)
            case McpSchema.METHOD_RESOURCES_SUBSCRIBE, McpSchema.METHOD_RESOURCES_UNSUBSCRIBE ->
                    ask(resourceOwner(asked.get("uri").textValue()), method, asked);
            case McpSchema.METHOD_PROMPT_LIST -> listPrompts();
            case McpSchema.METHOD_PROMPT_GET -> {
                Prompt prompt = prompt(asked.get("name").textValue());
                asked.put("name", prompt.name());
                yield read(prompt.server(), method, asked, params, agent);
            }
            case McpSchema.METHOD_COMPLETION_COMPLETE -> complete(asked);
            default -> throw new ServerRefusedException(McpSchema.ErrorCodes.METHOD_NOT_FOUND, "Method not found: " + method);
        };
    }

    private ObjectNode complete(ObjectNode asked) {
        ObjectNode ref = (ObjectNode) asked.get("ref");
        if ("ref/prompt".equals(ref.get("type").textValue())) {
            Prompt prompt = prompt(ref.get("name").textValue());
            ref.put("name", prompt.name());
            return ask(prompt.server(), McpSchema.METHOD_COMPLETION_COMPLETE, asked);
        }
        String uri = ref.get("uri").textValue();
        String owner = templateOwners.get(uri);
        if (owner == null) {
            listTemplates(McpSchema.METHOD_RESOURCES_TEMPLATES_LIST);
            owner = templateOwners.get(uri);
        }
        if (owner == null) {
            owner = resourceOwner(uri);
        }
        return ask(owner, McpSchema.METHOD_COMPLETION_COMPLETE, asked);
    }

    /**
     * What the pages of a list said of caching them (the 2026-07-28 era's {@code ttlMs} and {@code cacheScope}),
     * made one for the list execache answers: the shortest {@code ttlMs} (a page without one: 0, as the specification
     * says), {@code private} when a page says so. A list some server could not give whole, or while a server is
     * not up (its items may join), is stale at once.
     */
    private static final class ListHints {
        private long ttlMs = Long.MAX_VALUE;
        private boolean isPrivate;

        void page(JsonNode page) {
            ResultTtl kept = ResultTtl.read(page.path("ttlMs").numberValue(), page.path("cacheScope").textValue());
            ttlMs = Math.min(ttlMs, kept.ttl() == null ? 0 : kept.ttl().toMillis());
            isPrivate |= kept.privateScope();
        }

        void incomplete() {
            ttlMs = 0;
        }

        ObjectNode on(ObjectNode result) {
            result.put("ttlMs", ttlMs == Long.MAX_VALUE ? 0 : ttlMs);
            result.put("cacheScope", isPrivate ? "private" : "public");
            return result;
        }
    }

    private ListHints listHints() {
        ListHints hints = new ListHints();
        if (catalog.servers().stream().anyMatch(server -> server.state() != ToolCatalog.ServerStatus.State.UP)) {
            hints.incomplete();
        }
        return hints;
    }

    private ObjectNode listResources(String method) {
        ObjectNode result = Json.MAPPER.createObjectNode();
        resourceOwners = listResources("resources", "uri", method, result);
        return result;
    }

    private ObjectNode listTemplates(String method) {
        ObjectNode result = Json.MAPPER.createObjectNode();
        templateOwners = listResources("resourceTemplates", "uriTemplate", method, result);
        return result;
    }

    /**
     * Every page of every server's list of {@code key}, each item offered once, owned by its first server, into
     * {@code result}; gives the owner of each item offered, in the servers' order.
     */
    private Map<String, String> listResources(String key, String idField, String method, ObjectNode result) {
        ArrayNode all = result.putArray(key);
        Map<String, String> now = new LinkedHashMap<>();
        ListHints hints = listHints();
        for (String server : serversOffering("resources")) {
            for (JsonNode item : allPages(server, method, key, hints)) {
                String id = item.path(idField).asText();
                String owner = now.putIfAbsent(id, server);
                if (owner != null && !owner.equals(server)) {
                    warnOnce("server " + server + ": its resource " + id + " is not offered: server " + owner
                            + " offers the same " + (idField.equals("uri") ? "URI" : "template"));
                    continue;
                }
                all.add(item);
            }
        }
        hints.on(result);
        return Collections.unmodifiableMap(now);
    }

    private ObjectNode listPrompts() {
        ObjectNode result = Json.MAPPER.createObjectNode();
        ArrayNode all = result.putArray("prompts");
        Map<String, Prompt> now = new LinkedHashMap<>();
        ListHints hints = listHints();
        for (String server : serversOffering("prompts")) {
            for (JsonNode item : allPages(server, McpSchema.METHOD_PROMPT_LIST, "prompts", hints)) {
                String own = item.path("name").asText();
                String name = unprefixed.contains(server) ? own : server + "__" + own;
                if (now.containsKey(name)) {
                    warnOnce("server " + server + ": its prompt " + own + " is not offered: another prompt is offered"
                            + " as " + name);
                    continue;
                }
                now.put(name, new Prompt(server, own));
                ObjectNode offered = ((ObjectNode) item).deepCopy();
                offered.put("name", name);
                all.add(offered);
            }
        }
        prompts.keySet().retainAll(now.keySet());
        prompts.putAll(now);
        return hints.on(result);
    }

    private Prompt prompt(String name) {
        Prompt prompt = prompts.get(name);
        if (prompt == null) {
            listPrompts();
            prompt = prompts.get(name);
        }
        if (prompt == null) {
            throw new ServerRefusedException(McpSchema.ErrorCodes.INVALID_PARAMS, "Unknown prompt: " + name
                    + " (prompts/list names the prompts the servers behind execache offer)");
        }
        return prompt;
    }

    /** The server that listed {@code uri}, else the first whose template matches it; the lists asked if need be. */
    private String resourceOwner(String uri) {
        String owner = resourceOwners.get(uri);
        if (owner == null) {
            listResources(McpSchema.METHOD_RESOURCES_LIST);
            owner = resourceOwners.get(uri);
        }
        if (owner == null) {
            if (templateOwners.isEmpty()) {
                listTemplates(McpSchema.METHOD_RESOURCES_TEMPLATES_LIST);
            }
            owner = templateOwner(uri);
        }
        if (owner == null) {
            throw new ServerRefusedException(RESOURCE_NOT_FOUND, "Resource not found: " + uri + " (no server behind"
                    + " execache lists it or a template that matches it)");
        }
        return owner;
    }

    /**
     * Whether {@code uri} is not offered as another server's resource than {@code server}'s, as far as the lists
     * asked so far say (no server is asked): its server is the one that listed it, else the first whose template
     * matches it. A URI no list names (none was asked yet, or a server's list failed) is taken as the sender's.
     */
    boolean offersAs(String server, String uri) {
        String owner = resourceOwners.get(uri);
        if (owner == null) {
            owner = templateOwner(uri);
        }
        return owner == null || owner.equals(server);
    }

    private String templateOwner(String uri) {
        for (Map.Entry<String, String> template : templateOwners.entrySet()) {
            if (matches(template.getKey(), uri)) {
                return template.getValue();
            }
        }
        return null;
    }

    /**
     * Whether a URI is one a template (RFC 6570) expands to. Hand-written: no library here matches URIs against
     * templates; a {@code {+var}} or {@code {#var}} stands for any text, any other expression for text without
     * {@code /}, {@code ?} or {@code #}.
     */
    static boolean matches(String template, String uri) {
        StringBuilder regex = new StringBuilder();
        Matcher expression = Pattern.compile("\\{([^}]*)}").matcher(template);
        int at = 0;
        while (expression.find()) {
            regex.append(Pattern.quote(template.substring(at, expression.start())));
            String inside = expression.group(1);
            regex.append(inside.startsWith("+") || inside.startsWith("#") ? ".*" : "[^/?#]*");
            at = expression.end();
        }
        regex.append(Pattern.quote(template.substring(at)));
        return uri.matches(regex.toString());
    }

    private Iterable<String> serversOffering(String feature) {
        Set<String> servers = new LinkedHashSet<>();
        catalog.features().forEach((server, features) -> {
            if (features.contains(feature)) {
                servers.add(server);
            }
        });
        return servers;
    }

    private ArrayNode allPages(String server, String method, String key, ListHints hints) {
        ArrayNode items = Json.MAPPER.createArrayNode();
        String cursor = null;
        for (int page = 0; page < MAX_PAGES; page++) {
            ObjectNode params = Json.MAPPER.createObjectNode();
            if (cursor != null) {
                params.put("cursor", cursor);
            }
            ObjectNode result;
            try {
                result = ask(server, method, params);
            } catch (ServerRefusedException e) {
                LOG.log(System.Logger.Level.WARNING, "server " + server + ": " + method + " failed: " + e.getMessage());
                hints.incomplete();
                return items;
            }
            hints.page(result);
            if (result.get(key) instanceof ArrayNode listed) {
                items.addAll(listed);
            }
            cursor = result.path("nextCursor").isTextual() ? result.get("nextCursor").textValue() : null;
            if (cursor == null) {
                break;
            }
        }
        return items;
    }

    /**
     * A read ({@code resources/read}, {@code prompts/get}) through the cache, marked as every answer through execache
     * is (see {@link CacheMeta}; the server's own {@code _meta} stays); a resource read with the hints of the
     * 2026-07-28 era made true for what execache answers: {@code ttlMs} what remains of the stored copy's freshness (else the server's own
     * {@code ttlMs}, else 0), {@code cacheScope} the server's (else {@code private}).
     *
     * @param asked the params the server is asked, without {@code _meta}
     * @param params the params as the agent sent them (its {@code _meta} may ask for a fresh answer)
     */
    private ObjectNode read(String server, String method, ObjectNode asked, ObjectNode params, String agent) {
        Freshness freshness;
        try {
            freshness = CacheMeta.freshnessOf(params.get("_meta") instanceof ObjectNode meta
                    ? Json.MAPPER.convertValue(meta, OBJECT) : null);
        } catch (IllegalArgumentException e) {
            throw new ServerRefusedException(McpSchema.ErrorCodes.INVALID_PARAMS, "Invalid params: " + e.getMessage());
        }
        ToolCallOutcome outcome = reader.read(server, method, Json.MAPPER.convertValue(asked, OBJECT), agent, freshness);
        ObjectNode result;
        try {
            result = (ObjectNode) Json.MAPPER.readTree(outcome.result().json());
        } catch (IOException | ClassCastException e) {
            throw new ServerRefusedException(McpSchema.ErrorCodes.INTERNAL_ERROR, "server " + server + " answered "
                    + method + " with something that is not a result");
        }
        if (ServerReads.INPUT_REQUIRED.equals(result.path("resultType").textValue())) {
            // the server asks the agent first: its requests and requestState go on as it gave them, with nothing added
            return result;
        }
        Instant now = clock.instant();
        ResultTtl serverTtl = ResultTtl.read(result.path("ttlMs").numberValue(), result.path("cacheScope").textValue());
        String because = outcome.notCachedBecause();
        if (serverTtl.staleAtOnce() && because != null && because.contains("cache_hint")) {
            because = "the server said it is stale at once (ttlMs: 0)";
        }
        ObjectNode meta = result.get("_meta") instanceof ObjectNode own ? own : result.putObject("_meta");
        meta.set(CacheMeta.KEY, Json.MAPPER.valueToTree(CacheMeta.of(outcome.status(), outcome.storedAt(),
                outcome.expiresAt(), because, now)));
        if (McpSchema.METHOD_RESOURCES_READ.equals(method)) {
            // prompts/get carries no such hints
            long ttlMs = outcome.expiresAt() != null ? Math.max(0, Duration.between(now, outcome.expiresAt()).toMillis())
                    : serverTtl.ttl() != null ? serverTtl.ttl().toMillis() : 0;
            result.put("ttlMs", ttlMs);
            if (!result.path("cacheScope").isTextual()) {
                result.put("cacheScope", "private");
            }
        }
        return result;
    }

    private ObjectNode ask(String server, String method, ObjectNode params) {
        String answer = catalog.ask(server, method, Json.write(params));
        try {
            if (Json.MAPPER.readTree(answer) instanceof ObjectNode result) {
                return result;
            }
        } catch (IOException e) {
            // told below
        }
        throw new ServerRefusedException(McpSchema.ErrorCodes.INTERNAL_ERROR, "server " + server + " answered " + method
                + " with something that is not a result");
    }

    private void warnOnce(String warning) {
        if (warned.add(warning)) {
            LOG.log(System.Logger.Level.WARNING, warning);
        }
    }
}
