package dev.execache.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.core.CacheHint;
import dev.execache.core.CacheStatus;
import dev.execache.core.CachedTool;
import dev.execache.core.Freshness;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.RemovalCause;
import dev.execache.core.ToolCallOutcome;
import dev.execache.core.ToolCallRequest;
import dev.execache.core.ToolResult;
import dev.execache.core.spi.Counter;
import dev.execache.core.spi.ResultTtl;
import dev.execache.core.spi.ServerRefusedException;
import dev.execache.core.spi.ToolCatalog;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiPredicate;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The servers' reads that are not tool calls ({@code resources/read}, {@code prompts/get}), answered through the
 * gateway's tool cache by the policy of a read-only tool's call, and removed from it when their server says they
 * changed ({@link #changed}).
 *
 * <p>A read that was in flight when its server said they changed is not stored, as a read that was in flight
 * during a write to its server is not: every read notes its server's write generation (see
 * {@link dev.execache.core.spi.WriteGenerations}) before it asks, and a server's notice of a change advances that
 * generation before the cached reads it names are removed. So such a read is either refused by the store (its put
 * came after the notice) or was stored before it and is removed with the others. The generation is the server's
 * own, shared with its writes: a notice also keeps the server's tool reads in flight at that moment from being
 * stored, which costs a miss, never a stale answer.
 */
final class ServerReads {
    /** The reads that are not tool calls, cached by the same policy as read-only tools' calls. */
    static final Set<String> READS = Set.of(McpSchema.METHOD_RESOURCES_READ, McpSchema.METHOD_PROMPT_GET);
    /** The notifications by which a server says some of its reads changed. */
    private static final Set<String> CHANGES = Set.of(McpSchema.METHOD_NOTIFICATION_RESOURCES_UPDATED,
            McpSchema.METHOD_NOTIFICATION_RESOURCES_LIST_CHANGED, McpSchema.METHOD_NOTIFICATION_PROMPTS_LIST_CHANGED);
    /** The resultType of a 2026-07-28 answer that needs the client's answers to the server's requests first. */
    static final String INPUT_REQUIRED = "input_required";
    private static final System.Logger LOG = System.getLogger("dev.execache.mcp.server");

    private final ToolCatalog catalog;
    private final MutableToolVersions versions;
    private final LongSupplier agentAsks;
    /** The reads asked so far, by the cache's name for them ({@link #readName}). */
    private final Map<String, Read> reads = new ConcurrentHashMap<>();
    private volatile CachedTool cache;
    private final BiPredicate<String, String> askedFresh;
    private final Supplier<ToolCatalog.Agent> askingAgent;

    /** A read of a server that is not a tool call: {@code resources/read} or {@code prompts/get}. */
    private record Read(String server, String method) {
    }

    /**
     * @param agentAsks how many requests of the servers' were relayed to an agent so far: a read during which it
     *     moved may have depended on an agent's answer, and is not stored (the catalog's reads carry no agent)
     * @param askedFresh whether a read of a server (its name, the read's name) is asked every time: a local
     *     server's read, unless a rule or the server's hint says otherwise
     * @param askingAgent the agent of the read being asked, which its server may ask something (each answer
     *     counted in {@code agentAsks}); null: none
     */
    ServerReads(ToolCatalog catalog, MutableToolVersions versions, LongSupplier agentAsks,
            BiPredicate<String, String> askedFresh, Supplier<ToolCatalog.Agent> askingAgent) {
        this.askingAgent = askingAgent;
        this.askedFresh = askedFresh;
        this.catalog = catalog;
        this.versions = versions;
        this.agentAsks = agentAsks;
    }

    /** The tool cache the reads go through; given once it is built, since it asks {@link #ask} for a miss. */
    void cacheIn(CachedTool tool) {
        this.cache = tool;
    }

    /**
     * The name the cache knows one server's reads of {@code method} by, as it knows a tool by {@code SERVER__TOOL}:
     * {@code SERVER__resources/read}, {@code SERVER__prompts/get} (no tool's name has a {@code /}). Rules, stats,
     * {@code clear_cache} and a write's removal of the server's reads ({@code SERVER__*}) name them so.
     */
    static String readName(String server, String method) {
        return server + "__" + method;
    }

    /** Whether the cache's name {@code name} is one of a read's (and not a tool's). */
    boolean isRead(String name) {
        return reads.containsKey(name);
    }

    /**
     * Answers a read of {@code server} (one of {@link #READS}) through the tool cache, by the policy of a read-only
     * tool's call: its params (but {@code _meta}) are its arguments; the server's answer is kept no longer than its
     * {@code ttlMs} allows, never when that is 0, and a {@code cacheScope: "private"} answer of a server shared
     * publicly ({@code share: public}) is not kept. An error is thrown, never kept.
     *
     * @param params the request's params without {@code _meta}, with the server's own names (a prompt's, say)
     */
    ToolCallOutcome read(String server, String method, Map<String, Object> params, String agent, Freshness freshness) {
        if (!READS.contains(method)) {
            throw new IllegalArgumentException("not a read: " + method);
        }
        String name = readName(server, method);
        Read read = new Read(server, method);
        if (params.containsKey("inputResponses") || params.containsKey("requestState")) {
            // a retry carrying the agent's answers (2026-07-28): it depends on inputs the key does not hold
            return ToolCallOutcome.notCached(ask(read, params), CacheStatus.BYPASS,
                    "a retry with the agent's answers is never cached");
        }
        reads.putIfAbsent(name, read);
        // keyed on the server's identity, as its tools' calls are: one configuration's answers are never another's
        String identity = catalog.identities().getOrDefault(server, "shared publicly");
        versions.set(name, version(server, method, identity));
        ToolCallRequest request = ToolCallRequest.of(name, params).withAgent(agent).withFreshness(freshness);
        if (askedFresh.test(server, name)) {
            return cache.call(request.uncached(new ToolCallRequest.Uncached(false, ToolCallRules.LOCAL_READ,
                    Counter.UNCACHEABLE_LOCAL_SERVER)));
        }
        // a read of the server whatever its invalidate_on_write: its notices of a change advance its generation
        return cache.call(request.readOf(server));
    }

    /** Asks the server the read the cache knows as {@code name} (a miss); see {@link #isRead}. */
    ToolResult ask(String name, Map<String, Object> params) {
        Read read = reads.get(name);
        if (read == null) {
            throw new IllegalArgumentException("not a read: " + name);
        }
        return ask(read, params);
    }

    private ToolResult ask(Read read, Map<String, Object> params) {
        long asksBefore = agentAsks.getAsLong();
        String answer = catalog.ask(read.server(), read.method(), Json.write(Json.MAPPER.valueToTree(params)),
                askingAgent.get());
        JsonNode result;
        try {
            result = Json.MAPPER.readTree(answer);
        } catch (IOException e) {
            result = null;
        }
        if (!(result instanceof ObjectNode)) {
            throw new ServerRefusedException(McpSchema.ErrorCodes.INTERNAL_ERROR, "server "
                    + read.server() + " answered " + read.method() + " with something that is not a result");
        }
        ToolResult answered = Gateway.withHint(ToolResult.ok(answer));
        if (INPUT_REQUIRED.equals(result.path("resultType").textValue())) {
            // the server asks the agent something first (2026-07-28): the agent's, at that moment, and no answer yet
            return answered.withHint(CacheHint.NO_CACHE);
        }
        ResultTtl kept = ResultTtl.read(result.path("ttlMs").numberValue(), result.path("cacheScope").textValue());
        if (kept.ttl() != null) {
            answered = kept.staleAtOnce() ? answered.withHint(CacheHint.NO_CACHE) : answered.withMaxAge(kept.ttl());
        }
        if (kept.privateScope() && !catalog.identities().containsKey(read.server())) {
            // the server's answers are shared by every configuration of it, but this one is the asker's own
            answered = answered.withHint(CacheHint.NO_CACHE);
        }
        // an answer that depended on what an agent answered is that agent's, at that moment
        return agentAsks.getAsLong() != asksBefore ? answered.withHint(CacheHint.AGENT_ANSWERED) : answered;
    }

    /** A read's version: a digest of the server, the method and the server's identity, so that keys carry all three. */
    private static String version(String server, String method, String identity) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256")
                    .digest((server + "\n" + method + "\n" + identity).getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform must provide SHA-256", e);
        }
    }

    /**
     * A server said a resource changed: {@code notifications/resources/updated} removes that URI's cached read,
     * {@code .../resources/list_changed} every cached read of the server's resources and
     * {@code .../prompts/list_changed} of its prompts (counted as invalidations of the cause {@code resource}); the
     * server's reads in flight are not stored. Other notifications change nothing.
     */
    void changed(String server, String method, Map<String, Object> params) {
        if (!CHANGES.contains(method)) {
            return;
        }
        // before the removal: a read stored after it would be stale (see the class's comment)
        cache.advanceWriteGeneration(server);
        int removed = switch (method) {
            case McpSchema.METHOD_NOTIFICATION_RESOURCES_UPDATED -> params.get("uri") instanceof String uri
                    && cache.policy().remove(readName(server, McpSchema.METHOD_RESOURCES_READ), Map.of("uri", uri),
                            RemovalCause.RESOURCE) ? 1 : 0;
            case McpSchema.METHOD_NOTIFICATION_RESOURCES_LIST_CHANGED ->
                    cache.policy().clear(readName(server, McpSchema.METHOD_RESOURCES_READ), RemovalCause.RESOURCE);
            case McpSchema.METHOD_NOTIFICATION_PROMPTS_LIST_CHANGED ->
                    cache.policy().clear(readName(server, McpSchema.METHOD_PROMPT_GET), RemovalCause.RESOURCE);
            default -> 0;
        };
        if (removed > 0) {
            LOG.log(Level.INFO, "server " + server + " sent " + method + ": removed " + removed + " cached "
                    + (removed == 1 ? "read" : "reads"));
        }
    }
}
