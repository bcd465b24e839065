package dev.execache.gateway;

import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.core.CacheListener;
import dev.execache.core.CachePolicy;
import dev.execache.core.CacheHint;
import dev.execache.core.CacheStatus;
import dev.execache.core.CachedTool;
import dev.execache.core.Freshness;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.RemovalCause;
import dev.execache.core.StoreGuard;
import dev.execache.core.spi.SessionRegistry;
import dev.execache.core.ToolCacheRule;
import dev.execache.core.ToolCallInfo;
import dev.execache.core.ToolCallOutcome;
import dev.execache.core.ToolCallRequest;
import dev.execache.core.ToolResult;
import dev.execache.core.ToolStats;
import dev.execache.core.spi.Counter;
import dev.execache.core.spi.CatalogTool;
import dev.execache.core.spi.CodeToolCall;
import dev.execache.core.spi.CodeTools;
import dev.execache.core.spi.Telemetry;
import dev.execache.core.spi.ToolCatalog;
import dev.execache.core.spi.WriteGenerations;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CancellationException;
import java.util.function.BiConsumer;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The downstream servers' tools as {@code serve} offers them: each as {@code SERVER__TOOL},
 * called through {@link CachedTool} when {@link ToolCallRules} says so. A call that may write
 * drops the cached reads of its server (unless the server says {@code invalidate_on_write: none}).
 * Each tool's version is its digest; a new digest drops that tool's entries.
 *
 * <p>They are also the tools code calls ({@code tools.SERVER.TOOL(args)}, see {@link CodeTools}):
 * the same calls through the same cache. A write to server S also drops the cached runs of code
 * that called S's tools.
 *
 * <p>A read of S that was in flight when a call that may write to S started or ended is not kept,
 * nor a run that read S before such a call, whichever fleet member made the write: the store
 * keeps each server's write generation, which such a call advances when it starts and when it
 * ends; a read notes it before it asks S and is stored only if it has not moved, checked by the
 * store atomically with the put. (The removal after the write's end catches what was stored
 * before it; the argument is in {@link WriteGenerations}.) The generation is per server name, as
 * the removal of S's reads is: every configuration of S on the store shares it, so a write through
 * one configuration (another credential for the same account, say) stops the others' racing reads too.
 */
public final class Gateway implements CodeTools {
    static final TypeReference<Map<String, Object>> OBJECT = new TypeReference<>() {
    };
    /** Text is JSON only when all of it is: "true story" is text, not true. */
    private static final ObjectReader STRICT = Json.MAPPER.reader()
            .with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    private static final System.Logger LOG = System.getLogger("dev.execache.mcp.server");
    /**
     * The progress sink of the agent's call this thread is making, read by the cache's invoker: the policy loop
     * runs a miss on the calling thread and its tool port carries a tool's name and arguments only.
     */
    private static final ThreadLocal<Consumer<Map<String, Object>>> CALL_PROGRESS = new ThreadLocal<>();
    /** The agent that made the call this thread is making, which its server may ask something; read as the progress is. */
    private static final ThreadLocal<ToolCatalog.Agent> CALL_AGENT = new ThreadLocal<>();
    /** The names a tool may have (the specification's: 1 to 128 of these characters); no read's name is one. */
    private static final Pattern TOOL_NAME = Pattern.compile("[A-Za-z0-9_.-]{1,128}");
    /** The person the call this thread is making is made for (a server reached as them gets their token); read as the progress is. */
    private static final ThreadLocal<ToolCatalog.Person> CALL_PERSON = new ThreadLocal<>();
    /**
     * A task's final answer, which a miss of its tool takes instead of calling the server (see {@link #keepTaskAnswer});
     * a null result: only a hit is wanted, a miss stores nothing (see {@link #cachedTaskAnswer}).
     */
    private static final ThreadLocal<TaskAnswer> TASK_ANSWER = new ThreadLocal<>();

    private final StoreGuard store;
    private final ToolCatalog catalog;
    /** The servers whose answers are each calling person's own: keyed on the person, never shared between people. */
    private final Set<String> perPerson;
    private final MutableToolVersions versions;
    private final ToolCallRules rules;
    private final Set<String> invalidatedOnWrite;
    /** The servers behind the gateway, by name. */
    private final Set<String> servers;
    private final Set<String> codeAccess;
    private final CachedTool cachedTool;
    private final ServerFeatures features;
    private final ServerTasks tasks;
    private final Map<String, String> identities;
    private final Clock clock;
    /** Gathers a burst of list changes into one notice (see {@link #onNotification}). */
    private final Function<Runnable, ListChangeNotices> listChanges;
    private Map<String, CatalogTool> current = Map.of();
    /** The search over {@code searchOf}, the tools it was built from; see {@link #toolSearch}. */
    private ToolSearch search;
    /** The servers' instructions {@code search} was built with: they speak of their tools by name. */
    private Map<String, String> searchInstructions;
    private Map<String, CatalogTool> searchOf;
    /** Each current tool's decision, made once when the tools change rather than on every call (#29). */
    private Map<String, ToolCallRules.Decision> decisions = Map.of();
    /** Why a tool's rule's validator cannot revalidate its calls now, by tool; see {@link ToolCallRules#validatorProblem}. */
    private Map<String, String> validatorProblems = Map.of();
    private final OfferedTools offered;
    private final StartingServers starting;
    private final ServerLogs logs;
    /** The calls serve is answering, so that a cancelled one stops (see {@link #servedBy}). */
    private volatile InFlightCalls calls = new InFlightCalls();
    /** The servers' reads that are not tool calls. */
    private final ServerReads reads;
    /**
     * How many requests of the servers' were relayed to an agent so far: a read during which it moved may have
     * depended on an agent's answer, and is not stored (the catalog's reads carry no agent of their own).
     */
    private final AtomicLong agentAsks = new AtomicLong();
    /** The servers whose tools are offered under their own names. */
    private final Set<String> unprefixed;
    /** The servers whose reads are asked every time unless a rule or the server's hint says otherwise. */
    private final Set<String> readsFresh;
    /**
     * The tools and reads of those servers whose server said of an answer that it means it to be reused
     * ({@code cache_hint: cache}, or a {@code ttlMs} above 0): cached from then on, in this process.
     */
    private final Set<String> cacheHinted = ConcurrentHashMap.newKeySet();
    /** Where serve sends a call's notifications (its progress) to the agent that made it. */
    private volatile BiConsumer<String, ObjectNode> notifications = (method, params) -> { };

    /**
     * The downstream servers' tools as serve offers them and code calls them.
     *
     * @param store the guard of the store the tool cache keeps answers in: the one the executor of runs
     *     that call these tools was given, so that a store's outage is one for both
     * @param versions each tool's version (its digest), shared with the executor of runs that call them
     * @param cache the cache's own TTL and bound, for tools no rule gives one
     */
    public static Builder builder(ToolCatalog catalog, StoreGuard store, MutableToolVersions versions, GatewayPolicy config,
            CachePolicy cache) {
        return new Builder(catalog, store, versions, config, cache);
    }

    public static final class Builder {
        private final ToolCatalog catalog;
        private final StoreGuard store;
        private final MutableToolVersions versions;
        private final GatewayPolicy config;
        private final CachePolicy cache;
        private Clock clock = Clock.systemUTC();
        private Telemetry telemetry = Telemetry.NONE;
        private Function<Runnable, ListChangeNotices> listChanges = ListChangeNotices::of;

        private Builder(ToolCatalog catalog, StoreGuard store, MutableToolVersions versions, GatewayPolicy config,
                CachePolicy cache) {
            this.catalog = Objects.requireNonNull(catalog, "catalog must not be null");
            this.store = Objects.requireNonNull(store, "store must not be null");
            this.versions = Objects.requireNonNull(versions, "versions must not be null");
            this.config = Objects.requireNonNull(config, "config must not be null");
            this.cache = Objects.requireNonNull(cache, "cache must not be null");
        }

        /** Where the answers' ages and expiries are read; the system's UTC clock by default. */
        public Builder clock(Clock time) {
            this.clock = Objects.requireNonNull(time, "clock must not be null");
            return this;
        }

        /** Where the tool cache's spans (lookup, flight wait) and counts are reported; none by default. */
        public Builder telemetry(Telemetry reportTo) {
            this.telemetry = Objects.requireNonNull(reportTo, "telemetry must not be null");
            return this;
        }

        /** How the servers' resources and prompts list_changed are gathered into one per burst; the tests' own timer. */
        Builder listChanges(Function<Runnable, ListChangeNotices> notices) {
            this.listChanges = Objects.requireNonNull(notices, "listChanges must not be null");
            return this;
        }

        public Gateway build() {
            return new Gateway(catalog, store, versions, config, cache, clock, telemetry, listChanges);
        }
    }

    private Gateway(ToolCatalog catalog, StoreGuard store, MutableToolVersions versions, GatewayPolicy config,
            CachePolicy policy, Clock clock, Telemetry telemetry, Function<Runnable, ListChangeNotices> listChanges) {
        this.catalog = catalog;
        this.perPerson = Set.copyOf(catalog.perPerson());
        this.store = store;
        this.listChanges = listChanges;
        this.versions = versions;
        this.rules = new ToolCallRules(config.rules(), policy, config.servers());
        this.clock = clock;
        this.invalidatedOnWrite = config.servers().stream().filter(GatewayPolicy.Server::invalidateOnWrite)
                .map(GatewayPolicy.Server::name).collect(Collectors.toSet());
        this.servers = config.servers().stream().map(GatewayPolicy.Server::name).collect(Collectors.toSet());
        this.readsFresh = config.servers().stream().filter(GatewayPolicy.Server::readsFresh)
                .map(GatewayPolicy.Server::name).collect(Collectors.toSet());
        this.codeAccess = config.servers().stream().filter(GatewayPolicy.Server::codeAccess)
                .map(GatewayPolicy.Server::name).collect(Collectors.toSet());
        Set<String> unprefixed = config.servers().stream().filter(server -> !server.prefixed())
                .map(GatewayPolicy.Server::name).collect(Collectors.toSet());
        this.unprefixed = Set.copyOf(unprefixed);
        this.offered = new OfferedTools(unprefixed, this::specification);
        this.starting = new StartingServers(catalog, codeAccess, () -> toolsChanged(catalog.tools()));
        this.logs = new ServerLogs(catalog);
        this.reads = new ServerReads(catalog, versions, agentAsks::get, this::readAskedFresh, this::countedAgent);
        this.features = new ServerFeatures(catalog, starting, unprefixed, reads::read, clock);
        this.tasks = new ServerTasks(catalog, starting, this, clock);
        Map<String, String> reachableIdentities = new TreeMap<>(catalog.identities());
        reachableIdentities.keySet().retainAll(codeAccess);
        this.identities = Map.copyOf(reachableIdentities);
        CachedTool.Builder builder = CachedTool.builder((name, args) -> noteHint(name, ask(name, args)), store)
                .defaultRule(policy.enabled(), policy.ttl(), policy.maxEntries())
                .toolVersions(versions)
                .clock(clock)
                .telemetry(telemetry)
                .listener(new CacheListener() {
                    @Override
                    public void onInvalidation(String tool, int removed) {
                        LOG.log(Level.INFO, "tool " + tool + " changed: removed " + removed
                                + (removed == 1 ? " cached call" : " cached calls"));
                    }
                });
        for (ToolCacheRule rule : rules.cacheRules()) {
            builder.rule(rule);
        }
        builder.validatorUsable(name -> {
            if (reads.isRead(name)) {
                // a read is not a tool: a validator's arguments cannot be filled from its params
                return false;
            }
            synchronized (this) {
                return !validatorProblems.containsKey(name);
            }
        });
        this.cachedTool = builder.build();
        reads.cacheIn(cachedTool);
        catalog.addNotificationListener((server, method, params) -> {
            if (McpSchema.METHOD_NOTIFICATION_TOOLS_LIST_CHANGED.equals(method)) {
                // what the agent hears of it is serve's own list_changed, once per burst with the changes it brings
                offered.serverSaidChanged();
                return;
            }
            if (heard(server, method, params)) {
                reads.changed(server, method, params);
            } else {
                LOG.log(Level.DEBUG, "server " + server + " sent " + method + " for " + params.get("uri")
                        + ", a URI offered as another server's resource: not passed on");
            }
        });
        catalog.addListener(this::toolsChanged);
        toolsChanged(catalog.tools());
    }

    private record TaskAnswer(String tool, ToolResult result) {
    }

    /** Asks the server for a miss or an uncached call: a read of the server's, or a tool call. */
    private ToolResult ask(String name, Map<String, Object> args) {
        if (reads.isRead(name)) {
            return reads.ask(name, args);
        }
        TaskAnswer task = TASK_ANSWER.get();
        if (task != null && task.tool().equals(name)) {
            // an error is never stored
            return task.result() != null ? task.result()
                    : ToolResult.error("{\"content\":[],\"isError\":true}");
        }
        Consumer<Map<String, Object>> progress = CALL_PROGRESS.get();
        ToolCatalog.Agent agent = CALL_AGENT.get();
        ToolCatalog.Person person = CALL_PERSON.get();
        if (agent == null) {
            return withHint(person != null ? catalog.call(name, args, progress, null, person)
                    : progress == null ? catalog.call(name, args) : catalog.call(name, args, progress));
        }
        AtomicBoolean asked = new AtomicBoolean();
        ToolResult result = withHint(catalog.call(name, args, progress, new ToolCatalog.ForwardingAgent(agent) {
            @Override
            public String ask(String method, String params) {
                asked.set(true);
                agentAsks.incrementAndGet();
                return super.ask(method, params);
            }

            @Override
            public String givenAnswers() {
                String given = super.givenAnswers();
                if (given != null) {
                    // the answer depends on them, which the key does not hold
                    asked.set(true);
                }
                return given;
            }

            @Override
            public String askRound(String inputRequests, String requestState) {
                asked.set(true);
                agentAsks.incrementAndGet();
                return super.askRound(inputRequests, requestState);
            }
        }, person));
        // an answer that depended on what the agent answered (a sampled message, a person's input,
        // its roots) is that agent's and that moment's: never stored
        return asked.get() ? result.withHint(CacheHint.AGENT_ANSWERED) : result;
    }

    /**
     * The agent of the request this thread answers (see {@link #askingAgent}), each of its answers counted as the
     * gateway counts them (a read during which one was given is not stored); null: none.
     */
    private ToolCatalog.Agent countedAgent() {
        ToolCatalog.Agent agent = CALL_AGENT.get();
        if (agent == null) {
            return null;
        }
        return new ToolCatalog.ForwardingAgent(agent) {
            @Override
            public String ask(String method, String params) {
                agentAsks.incrementAndGet();
                return super.ask(method, params);
            }

            @Override
            public String askRound(String inputRequests, String requestState) {
                agentAsks.incrementAndGet();
                return super.askRound(inputRequests, requestState);
            }
        };
    }

    /** Notes that the server of a local read means its answers to be reused: its next calls are cached. */
    private ToolResult noteHint(String name, ToolResult result) {
        boolean reuse = result.hint() == CacheHint.CACHE
                || result.hint() == CacheHint.NONE && result.maxAge() != null && !result.maxAge().isZero() && !result.maxAge().isNegative();
        if (reuse && !result.isError()) {
            cacheHinted.add(name);
        }
        return result;
    }

    /**
     * Whether a read of {@code server} known to the cache as {@code name} is asked every time: the server's reads
     * are fresh by default ({@link GatewayPolicy.Server#readsFresh}), no rule names it and its server has not said
     * it means its answers to be reused.
     */
    private boolean readAskedFresh(String server, String name) {
        return readsFresh.contains(server) && !cacheHinted.contains(name)
                && rules.rules().stream().noneMatch(rule -> rule.tools().matches(name));
    }

    /** Hits and misses per gateway tool, counted in this process. */
    public Map<String, ToolStats> stats() {
        return cachedTool.policy().stats();
    }

    ToolCallRules rules() {
        return rules;
    }

    /**
     * What is wrong with the validators the rules name ({@code validate_with}), given the tools the
     * servers offer now: one line each, naming the rule; empty when every one can be used.
     */
    public synchronized Set<String> validatorProblems() {
        return new TreeSet<>(validatorProblems.values());
    }

    /** One call's key, and what the cache holds under it (nothing when it is not cached). */
    public record Inspected(String key, Optional<ToolCallInfo> info) {
    }

    /** What the cache holds for one call of a gateway tool, without counting a hit or calling the tool. */
    public Inspected inspect(String name, Map<String, Object> args) {
        return new Inspected(cachedTool.policy().keyFor(name, args), cachedTool.policy().inspect(name, args));
    }

    /** Removes the cached calls of every gateway tool whose name matches the glob; returns how many. */
    public int clear(String toolGlob) {
        return cachedTool.policy().clear(toolGlob);
    }

    /** What each server behind the gateway said of itself when it connected, by server name. */
    Map<String, String> instructions() {
        return catalog.instructions();
    }

    /**
     * Runs {@code call} (a gateway tool's handler) for a call made by {@code agent}, which the tool's server may ask
     * something while it answers; null: nobody can be asked.
     */
    public static <T> T askingAgent(ToolCatalog.Agent agent, java.util.function.Supplier<T> call) {
        if (agent == null) {
            return call.get();
        }
        CALL_AGENT.set(agent);
        try {
            return call.get();
        } finally {
            CALL_AGENT.remove();
        }
    }

    /**
     * Where the servers' notifications go that the agent hears as they were sent: a resource updated, a list of
     * resources or prompts changed, a url elicitation completed.
     */
    public void onNotification(BiConsumer<String, ObjectNode> sink) {
        // a list changed is heard once per burst, as tools/list_changed is: servers joining or restarting one after
        // another, or telling their changes one at a time, would otherwise have the agent list again for each
        Map<String, ListChangeNotices> bursts = Map.of(
                McpSchema.METHOD_NOTIFICATION_RESOURCES_LIST_CHANGED, listChanges.apply(() -> sink.accept(
                        McpSchema.METHOD_NOTIFICATION_RESOURCES_LIST_CHANGED, Json.MAPPER.createObjectNode())),
                McpSchema.METHOD_NOTIFICATION_PROMPTS_LIST_CHANGED, listChanges.apply(() -> sink.accept(
                        McpSchema.METHOD_NOTIFICATION_PROMPTS_LIST_CHANGED, Json.MAPPER.createObjectNode())));
        catalog.addNotificationListener((server, method, params) -> {
            if (McpSchema.METHOD_NOTIFICATION_TOOLS_LIST_CHANGED.equals(method) || !heard(server, method, params)) {
                return;
            }
            ListChangeNotices burst = bursts.get(method);
            if (burst != null) {
                burst.changed();
            } else {
                sink.accept(method, Json.MAPPER.valueToTree(params));
            }
        });
    }

    /**
     * Whether a server's notification is of what execache offers: {@code resources/updated} only from the server whose
     * resource is offered under that URI (a later server that lists the same URI is not offered for it, so its
     * update is of a resource the agent does not read); every other notification.
     */
    private boolean heard(String server, String method, Map<String, Object> params) {
        return !McpSchema.METHOD_NOTIFICATION_RESOURCES_UPDATED.equals(method)
                || params.get("uri") instanceof String uri && features.offersAs(server, uri);
    }

    /** The agent a server's request outside any call goes to (the stdio session's); null: none. */
    public void setSessionAgent(ToolCatalog.Agent agent) {
        catalog.setSessionAgent(agent == null ? null : (method, params) -> {
            agentAsks.incrementAndGet();
            return agent.ask(method, params);
        });
    }

    /** The agent's roots changed: every server is told. */
    public void rootsChanged() {
        catalog.rootsChanged();
    }

    /** Asks every server behind the gateway to log from {@code level} up (see {@link #onLog}). */
    public void setLogLevel(McpSchema.LoggingLevel level) {
        logs.setLevel(level);
    }

    /**
     * Asks the servers to log from {@code level} up unless they were asked for a lower level already: over HTTP
     * many agents ask, each for its own level, and execache passes on to each only what it asked for.
     */
    public void logFrom(McpSchema.LoggingLevel level) {
        logs.logFrom(level);
    }

    /** The server of an offered gateway tool; null for a name that is not one. */
    public String serverOf(String offeredName) {
        return offered.serverOf(offeredName);
    }

    /**
     * Where the servers' log messages go, each as the params of a {@code notifications/message} tagged with its
     * server's name: {@code logger} is the server's name, or {@code SERVER/LOGGER} when the server named a logger;
     * level and data as the server sent them.
     */
    public void onLog(Consumer<ObjectNode> sink) {
        logs.onLog((server, tagged) -> sink.accept(tagged));
    }

    /** As {@link #onLog}, told the server's name too. */
    public void onServerLog(BiConsumer<String, ObjectNode> sink) {
        logs.onLog(sink);
    }

    /**
     * Where serve keeps the calls it answers, so that a client's cancel stops one of these tools' calls too, and
     * where it sends a call's notifications (a server's progress, under the agent's own token).
     */
    void servedBy(InFlightCalls serving, BiConsumer<String, ObjectNode> notifying, Set<String> own) {
        this.calls = serving;
        this.notifications = notifying;
        offered.ownTools(own);
    }

    /**
     * The agents' sessions as the store knows them (fleet-wide on a shared store); calls to it may fail when the
     * store does, for the transport to fall back on what it knows itself.
     */
    public SessionRegistry sessions() {
        return store.store().sessions();
    }

    /** The servers' resources, prompts and completion. */
    public ServerFeatures features() {
        return features;
    }

    /** The tools to offer now; later changes go to {@link #onChange}. */
    public List<OfferedTool> specifications() {
        return offered.specifications();
    }

    /**
     * The fields of the offered tool's definition, as its server wrote them, that the SDK's tool type drops
     * ({@code execution}, say): tools/list adds them back. Empty for a name that is not a gateway tool's.
     */
    public Map<String, Object> unknownFields(String name) {
        return offered.unknownFields(name);
    }

    /** Whether {@code name} is the offered name of a tool of a server behind the gateway. */
    public boolean offers(String name) {
        return offered.offers(name);
    }

    /** Where to send changes of the offered tools: those to add or replace, and the names to withdraw. */
    public void onChange(BiConsumer<List<OfferedTool>, List<String>> sink) {
        offered.onChange(sink);
    }

    public ToolResult call(String name, Map<String, Object> args) {
        return call(name, args, null);
    }

    /** As {@link #call(String, Map)}, counted also for {@code agent} (null: for none). */
    public ToolResult call(String name, Map<String, Object> args, String agent) {
        return callWithStatus(name, args, OptionalLong.empty(), agent, Freshness.ANY).result();
    }

    /** As {@link #call(String, Map, String)}, asked as fresh as {@code freshness} says, and how the cache answered. */
    public ToolCallOutcome callWithStatus(String name, Map<String, Object> args, String agent, Freshness freshness) {
        return callWithStatus(name, args, OptionalLong.empty(), agent, freshness);
    }

    /**
     * Whether a gateway tool's calls are cached now and why, with its TTL: the decision made when
     * the tool list last changed, and, for a local server's read, whether its server said it means its
     * answers to be reused.
     */
    public ToolCallRules.Decision decision(String name) {
        CatalogTool tool;
        synchronized (this) {
            tool = current.get(name);
        }
        if (tool == null) {
            return new ToolCallRules.Decision(false, "no such tool", null);
        }
        return hinted(name, decisionFor(tool));
    }

    /** A local server's read whose server said {@code cache_hint: cache} of an answer is cached, for the cache's TTL. */
    private ToolCallRules.Decision hinted(String name, ToolCallRules.Decision decision) {
        if (decision.cached() || !decision.freshRead() || !cacheHinted.contains(name)) {
            return decision;
        }
        return new ToolCallRules.Decision(true, "annotation readOnlyHint, its server said cache_hint: cache",
                rules.cacheTtl(), false, true);
    }

    /**
     * A server's result with what it said about caching it in its {@code _meta}: {@code cache_hint}
     * (SEP-2419, modelcontextprotocol/modelcontextprotocol#2419), or the namespaced key the proposal
     * names for when reserved keys are settled.
     */
    static ToolResult withHint(ToolResult result) {
        if (result.isError() || !result.json().contains("cache_hint")) {
            return result;
        }
        try {
            JsonNode meta = Json.MAPPER.readTree(result.json()).path("_meta");
            JsonNode hint = meta.has("cache_hint") ? meta.get("cache_hint") : meta.path("io.modelcontextprotocol/cache_hint");
            return result.withHint(CacheHint.of(hint.textValue()));
        } catch (JsonProcessingException e) {
            return result;
        }
    }

    /**
     * @param seen the write generation of the tool's server as noted before the call (by code, for
     *     its run); empty to have it noted on a miss
     */
    private ToolCallOutcome callWithStatus(String name, Map<String, Object> args, OptionalLong seen, String agent,
            Freshness freshness) {
        CatalogTool tool;
        ToolCallRules.Decision decision;
        synchronized (this) {
            tool = current.get(name);
            decision = decisions.get(name);
        }
        if (tool == null) {
            return callUnlisted(name, args, agent);
        }
        if (decision == null) {
            decision = rules.decide(tool);
        }
        decision = hinted(name, decision);
        boolean writesCounted = invalidatedOnWrite.contains(tool.server());
        ToolCallRequest request = ToolCallRequest.of(name, args).withAgent(agent).withFreshness(freshness);
        if (perPerson.contains(tool.server())) {
            ToolCatalog.Person person = CALL_PERSON.get();
            if (person == null) {
                // its server refuses a call made for nobody; nothing of it is kept
                return cachedTool.call(request.uncached(new ToolCallRequest.Uncached(false,
                        "its server is reached as each agent's person, and this call is made for nobody")));
            }
            request = request.forPerson(person.subject());
        }
        if (decision.cached()) {
            if (!writesCounted) {
                return cachedTool.call(request);
            }
            return cachedTool.call(seen.isPresent() ? request.readOf(tool.server(), seen.getAsLong())
                    : request.readOf(tool.server()));
        }
        // an uncached call may write, unless it is a local server's read asked fresh
        boolean mayWrite = writesCounted && !decision.freshRead();
        if (mayWrite) {
            cachedTool.advanceWriteGeneration(tool.server());
        }
        try {
            ToolCallRequest.Uncached why = decision.freshRead()
                    ? new ToolCallRequest.Uncached(false, decision.why(), Counter.UNCACHEABLE_LOCAL_SERVER)
                    : new ToolCallRequest.Uncached(!decision.turnedOff(), decision.why());
            return cachedTool.call(request.uncached(why));
        } finally {
            if (mayWrite) {
                cachedTool.advanceWriteGeneration(tool.server());
                dropReadsOf(tool.server(), name);
            }
        }
    }

    /**
     * A call of a tool its server does not list (or no longer lists): what it does is not known, so it is taken as one
     * that may write, never cached, and the server's cached reads are dropped after it, as after any call that may.
     */
    private ToolCallOutcome callUnlisted(String name, Map<String, Object> args, String agent) {
        int separator = name.indexOf("__");
        String server = separator > 0 ? name.substring(0, separator) : "";
        boolean writesCounted = invalidatedOnWrite.contains(server);
        if (writesCounted) {
            cachedTool.advanceWriteGeneration(server);
        }
        try {
            return cachedTool.call(ToolCallRequest.of(name, args).withAgent(agent).uncached(
                    new ToolCallRequest.Uncached(true, "its server does not list it, so what it does is not known")));
        } finally {
            if (writesCounted) {
                cachedTool.advanceWriteGeneration(server);
                dropReadsOf(server, name);
            }
        }
    }

    /**
     * A tool a server behind the gateway did not list, for a call that names it as the agent would name it directly:
     * {@code SERVER__TOOL} of a server offered with the prefix, else {@code TOOL} of the one server offered without it.
     * Passed on uncached (see {@link #callUnlisted}); null when the name is none of these, is not a tool name the
     * specification allows, or its server is not up or listed it (a tool execache left out of a list stays out).
     */
    public OfferedTool unlisted(String name) {
        if (!TOOL_NAME.matcher(name).matches()) {
            return null;
        }
        int separator = name.indexOf("__");
        String named = separator > 0 ? name.substring(0, separator) : null;
        String catalogName;
        if (named != null && servers.contains(named) && !unprefixed.contains(named)) {
            catalogName = name;
        } else if (unprefixed.size() == 1) {
            catalogName = unprefixed.iterator().next() + "__" + name;
        } else {
            return null;
        }
        synchronized (this) {
            if (current.containsKey(catalogName)) {
                return null;
            }
        }
        if (!catalog.unlisted(catalogName)) {
            return null;
        }
        McpSchema.Tool described = McpSchema.Tool.builder().name(name)
                .inputSchema(new McpSchema.JsonSchema("object", null, null, null, null, null)).build();
        return new OfferedTool(described, handler(catalogName));
    }

    /** The servers' tasks of tool calls. */
    public ServerTasks tasks() {
        return tasks;
    }

    /** The offered gateway tool of that name; null for a name that is not one. */
    CatalogTool offeredTool(String offeredName) {
        return offered.toolOf(offeredName);
    }

    /**
     * The answer the cache holds for a call of {@code tool}, asked as a task: a hit, as a plain call of the tool would
     * get it (counted so); empty when its calls are not cached or nothing is held for these arguments.
     */
    Optional<ToolCallOutcome> cachedTaskAnswer(String tool, Map<String, Object> args, String agent) {
        if (!decision(tool).cached() || cachedTool.policy().inspect(tool, args).isEmpty()) {
            return Optional.empty();
        }
        TASK_ANSWER.set(new TaskAnswer(tool, null));
        try {
            ToolCallOutcome outcome = callWithStatus(tool, args, OptionalLong.empty(), agent, Freshness.ANY);
            return outcome.status() == CacheStatus.HIT ? Optional.of(outcome) : Optional.empty();
        } finally {
            TASK_ANSWER.remove();
        }
    }

    /**
     * A task of {@code tool} completed with {@code result} (a tool result's JSON): stored as the tool's answer to these
     * arguments would be, under the same rules (a read of a server whose answers are cached; never an error).
     */
    void keepTaskAnswer(String tool, Map<String, Object> args, String agent, String result, boolean isError) {
        if (!decision(tool).cached()) {
            return;
        }
        TASK_ANSWER.set(new TaskAnswer(tool, withHint(new ToolResult(result, isError))));
        try {
            callWithStatus(tool, args, OptionalLong.empty(), agent, Freshness.ANY);
        } finally {
            TASK_ANSWER.remove();
        }
    }

    /** Whether calls of {@code tool} are cached, as decided when the tool list last changed. */
    private ToolCallRules.Decision decisionFor(CatalogTool tool) {
        ToolCallRules.Decision decision;
        synchronized (this) {
            decision = decisions.get(tool.name());
        }
        return decision != null ? decision : rules.decide(tool);
    }

    /** After a call that may have changed the server: its cached calls, and cached runs that called its tools. */
    private void dropReadsOf(String server, String writer) {
        int removed = cachedTool.policy().clear(server + "__*", RemovalCause.WRITE);
        if (removed > 0) {
            LOG.log(Level.INFO, writer + " may have changed server " + server + ": removed " + removed
                    + " cached " + (removed == 1 ? "result" : "results") + " that read it");
        }
    }

    @Override
    public synchronized Map<String, List<String>> reachable() {
        Map<String, List<String>> reachable = new TreeMap<>();
        for (CatalogTool tool : current.values()) {
            if (codeAccess.contains(tool.server())) {
                reachable.computeIfAbsent(tool.server(), server -> new ArrayList<>()).add(tool.serverToolName());
            }
        }
        return reachable;
    }

    /** How each server stands: starting, up, or unavailable and why. */
    public List<ToolCatalog.ServerStatus> servers() {
        return catalog.servers();
    }

    /** Whether a server is still starting (its tools are not offered yet). */
    public boolean starting() {
        return starting.any();
    }

    /**
     * For a call of a tool that is not offered: when the server it names is still starting, waits
     * for it (at most as long as its start may take) and offers what it brought at once, not when
     * the catalog's notice arrives. Returns whether the tool is offered now.
     */
    public boolean awaitTool(String name) throws InterruptedException {
        if (!starting.awaitServerOf(name)) {
            return false;
        }
        synchronized (this) {
            return current.containsKey(name);
        }
    }

    /**
     * For a call of a tool that is not offered because its server waits for a person's sign-in: the
     * agent is asked to have its person sign in (a URL-mode elicitation), and once signed in the
     * server's tools are offered. Returns whether the tool is offered now.
     */
    public boolean signInFor(String name, ToolCatalog.Agent agent) throws InterruptedException {
        int separator = name.indexOf("__");
        if (agent == null || separator <= 0 || !catalog.signIn(name.substring(0, separator), agent)) {
            return false;
        }
        return awaitTool(name);
    }

    /**
     * Once the servers that are starting have started: {@code agent} is asked to have its person sign in
     * to each server that waits for a sign-in, one after the other (a URL-mode elicitation each), so that
     * an agent that sees no tool of such a server can still have it signed in. Returns how many are up now
     * with a new sign-in.
     */
    public int signInWaiting(ToolCatalog.Agent agent) throws InterruptedException {
        awaitStartingServers();
        int signedIn = 0;
        for (ToolCatalog.ServerStatus server : catalog.servers()) {
            if (server.state() == ToolCatalog.ServerStatus.State.UNAVAILABLE && catalog.signIn(server.name(), agent)) {
                signedIn++;
            }
        }
        if (signedIn > 0) {
            // the servers signed in to are offered now, before the catalog's notice of them arrives
            awaitStartingServers();
        }
        return signedIn;
    }

    /**
     * Waits for every server that is still starting, each at most its start time, and offers what they
     * brought: also what a server that came up just now brought, before the catalog's notice of it arrives.
     */
    public void awaitStartingServers() throws InterruptedException {
        starting.awaitAll();
    }

    /** As {@link #awaitStartingServers}, returning by {@code deadline} at the latest. */
    void awaitStartingServersUntil(Instant deadline) throws InterruptedException {
        starting.awaitAllUntil(deadline);
    }

    /** Waits for the servers still starting to say their instructions, returning by {@code deadline} at the latest. */
    void awaitInstructionsUntil(Instant deadline) throws InterruptedException {
        starting.awaitIntroductionsUntil(deadline);
    }

    /**
     * Before a run: waits for each server that code may call and that is still starting, when the
     * code names it (see {@link StartingServers#awaitNamedIn}).
     */
    public void awaitServersNamedIn(String code) throws InterruptedException {
        starting.awaitNamedIn(code);
    }

    /** TypeScript declarations of the tools code can call now. */
    public synchronized String typescript() {
        return TypeScriptDeclarations.of(current.values(), codeAccess);
    }

    /** TypeScript declarations of these of the tools (those code can call). */
    String typescript(Collection<CatalogTool> tools) {
        return TypeScriptDeclarations.of(tools, codeAccess);
    }

    /** The servers' tools now, by catalog name ({@code SERVER__TOOL}). */
    synchronized Map<String, CatalogTool> catalogTools() {
        return current;
    }

    /** Whether code may call the server's tools. */
    boolean codeMayCall(String server) {
        return codeAccess.contains(server);
    }

    /** The search over the tools code can call now: built once after each change of the tools, on first use. */
    synchronized ToolSearch toolSearch() {
        Map<String, String> instructions = catalog.instructions();
        if (search == null || searchOf != current || !instructions.equals(searchInstructions)) {
            searchOf = current;
            searchInstructions = instructions;
            search = ToolSearch.of(current.values().stream().filter(tool -> codeAccess.contains(tool.server())).toList(),
                    instructions);
        }
        return search;
    }

    @Override
    public synchronized Set<String> names() {
        return Set.copyOf(current.keySet());
    }

    /** Every {@code SERVER__...} name of a server behind the gateway: its tools, offered now or not, and its reads. */
    @Override
    public boolean owns(String name) {
        int separator = name.indexOf("__");
        return separator > 0 && servers.contains(name.substring(0, separator));
    }

    /** The identities of the servers code may call, whether or not they are up yet. */
    @Override
    public Map<String, String> identities() {
        return identities;
    }

    /**
     * As {@link #call(String, String, String, String, Freshness)}, the server's progress going to the run's caller
     * under the tool's name, and its requests to the agent to the caller's agent (none: refused, saying so). Set on
     * the calling thread as a gateway call's are, and put back as they were after: the cache's invoker runs a miss on
     * this thread.
     */
    @Override
    public CodeToolCall call(String server, String tool, String argumentsJson, String agent, Freshness freshness,
            Caller caller) {
        if (caller == Caller.NONE) {
            return call(server, tool, argumentsJson, agent, freshness);
        }
        String name = server + "__" + tool;
        Consumer<Map<String, Object>> progressBefore = CALL_PROGRESS.get();
        ToolCatalog.Agent agentBefore = CALL_AGENT.get();
        ToolCatalog.Person personBefore = CALL_PERSON.get();
        CALL_PROGRESS.set(step -> caller.progress(name, step));
        setOrRemove(CALL_AGENT, caller.agent());
        setOrRemove(CALL_PERSON, caller.person());
        try {
            return call(server, tool, argumentsJson, agent, freshness);
        } finally {
            setOrRemove(CALL_PROGRESS, progressBefore);
            setOrRemove(CALL_AGENT, agentBefore);
            setOrRemove(CALL_PERSON, personBefore);
        }
    }

    private static <T> void setOrRemove(ThreadLocal<T> local, T value) {
        if (value == null) {
            local.remove();
        } else {
            local.set(value);
        }
    }

    /** The agent that made the call this thread answers, which a server may ask something; null: none. */
    static ToolCatalog.Agent callingAgent() {
        return CALL_AGENT.get();
    }

    /** The servers whose answers are each calling person's own. */
    Set<String> perPerson() {
        return perPerson;
    }

    /** What code gets: see {@link #answerOf}. */
    @Override
    public CodeToolCall call(String server, String tool, String argumentsJson, String agent, Freshness freshness) {
        CatalogTool found = null;
        synchronized (this) {
            for (CatalogTool candidate : current.values()) {
                if (candidate.server().equals(server) && candidate.serverToolName().equals(tool)) {
                    found = candidate;
                }
            }
        }
        if (found == null || !codeAccess.contains(server)) {
            return CodeToolCall.refused(server, tool, "tools." + server + "." + tool + " cannot be called from code: "
                    + (found == null ? "no such tool was discovered" : "server " + server + " has code_access: false"));
        }
        Map<String, Object> args;
        try {
            args = Json.MAPPER.readValue(argumentsJson, OBJECT);
        } catch (JsonProcessingException e) {
            return CodeToolCall.refused(server, tool, "tools." + server + "." + tool + ": the arguments are not a JSON"
                    + " object");
        }
        String version = versions.versions().get(found.name());
        ToolCallRules.Decision decision = hinted(found.name(), decisionFor(found));
        boolean cached = decision.cached();
        boolean writesCounted = invalidatedOnWrite.contains(server) && cached;
        // noted before the lookup: a hit the run uses must be as current as a fresh read
        OptionalLong seen = writesCounted ? cachedTool.writeGeneration(server) : OptionalLong.empty();
        ToolCallOutcome outcome;
        try {
            outcome = callWithStatus(found.name(), args, seen, agent, freshness);
        } catch (CancellationException e) {
            throw e;
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "the call of " + found.name() + " from code failed", e);
            ToolResult failed = ToolResult.error("the call of " + found.name() + " failed: " + e.getMessage());
            return new CodeToolCall(found.name(), version, failed, false, CacheStatus.BYPASS, 0);
        }
        // the hint goes with the answer: a run that read an agent's answer is that caller's alone (never shared)
        ToolResult answer = answerOf(outcome.result()).withHint(outcome.result().hint());
        // a read a run may depend on and a revalidation may ask again: one the cache keeps, or a local server's read
        // asked every time; an answer that depended on what the agent answered (that agent's) is not kept in a run
        // a person's answer is kept for them as a call, but not in a run, whose key names no person
        boolean cacheable = !answer.isError() && (cached || decision.freshRead()) && !perPerson.contains(server)
                && outcome.result().hint() != CacheHint.AGENT_ANSWERED && (!writesCounted || seen.isPresent());
        // a run is no fresher than its answers: one not in the cache (asked around it, or the server said not to keep
        // it) keeps the run out of the cache too, but for revalidation
        boolean stored = cacheable && outcome.status() != CacheStatus.BYPASS && outcome.expiresAt() != null
                && !outcome.result().hint().forbidsStoring();
        String notStored = stored ? null : outcome.notCachedBecause() != null ? outcome.notCachedBecause()
                : "it was not stored";
        return new CodeToolCall(found.name(), version,
                new ToolCallOutcome(answer, outcome.status(), stored ? outcome.expiresAt() : null, outcome.storedAt(),
                        notStored), cacheable,
                answer.json().getBytes(StandardCharsets.UTF_8).length,
                seen.isPresent() ? Map.of(server, seen.getAsLong()) : Map.of());
    }

    /**
     * A tool's result as code sees it: its structured content when it has one, else its text
     * (parsed when it is JSON), else its content array. An error is its text.
     */
    public static ToolResult answerOf(ToolResult result) {
        JsonNode node;
        try {
            node = Json.MAPPER.readTree(result.json());
        } catch (JsonProcessingException e) {
            return ToolResult.error("the tool's answer is not a tool result");
        }
        JsonNode content = node.path("content");
        StringBuilder text = new StringBuilder();
        boolean onlyText = content.isArray() && !content.isEmpty();
        for (JsonNode item : content) {
            if ("text".equals(item.path("type").asText()) && item.path("text").isTextual()) {
                text.append(text.isEmpty() ? "" : "\n").append(item.path("text").textValue());
            } else {
                onlyText = false;
            }
        }
        if (result.isError() || node.path("isError").asBoolean(false)) {
            return ToolResult.error(text.isEmpty() ? "the tool failed without a message" : text.toString());
        }
        JsonNode structured = node.path("structuredContent");
        if (!structured.isMissingNode() && !structured.isNull()) {
            return ToolResult.ok(Json.write(structured));
        }
        if (onlyText) {
            try {
                JsonNode parsed = STRICT.readTree(text.toString());
                if (parsed == null || parsed.isMissingNode()) {
                    throw new JsonParseException(null, "empty");
                }
                return ToolResult.ok(Json.write(parsed));
            } catch (IOException e) {
                return ToolResult.ok(Json.write(Json.MAPPER.getNodeFactory().textNode(text.toString())));
            }
        }
        return ToolResult.ok(Json.write(content.isMissingNode() ? Json.MAPPER.createArrayNode() : content));
    }

    private void toolsChanged(List<CatalogTool> tools) {
        for (CatalogTool tool : tools) {
            versions.set(tool.name(), tool.version());
        }
        synchronized (this) {
            Map<String, CatalogTool> now = new LinkedHashMap<>();
            Map<String, ToolCallRules.Decision> decided = new HashMap<>();
            tools.forEach(tool -> now.put(tool.name(), tool));
            Map<String, String> problems = new TreeMap<>();
            now.values().forEach(tool -> {
                decided.put(tool.name(), rules.decide(tool, now));
                rules.validatorProblem(tool, now).ifPresent(problem -> problems.put(tool.name(), "rule "
                        + rules.ruleOf(tool).orElseThrow().toolGlob() + ": " + problem));
            });
            new TreeSet<>(problems.values()).stream().filter(problem -> !validatorProblems.containsValue(problem))
                    .forEach(problem -> LOG.log(Level.WARNING, "tool_calls " + problem
                            + "; its tools' answers are kept for their TTL only"));
            validatorProblems = problems;
            current = now;
            decisions = decided;
            offered.toolsChanged(now);
        }
    }

    private OfferedTool specification(CatalogTool tool, String offeredName) {
        Map<String, Object> definition = new LinkedHashMap<>(tool.definition());
        definition.put("name", offeredName);
        McpSchema.Tool described = Json.MAPPER.convertValue(definition, McpSchema.Tool.class);
        return new OfferedTool(described, handler(tool.name()));
    }

    /** What answers a call of the tool the catalog knows as {@code catalogName}, through the cache. */
    private OfferedTool.Handler handler(String catalogName) {
        LastAnswer last = new LastAnswer();
        return (request, origin) -> {
            Freshness freshness;
            try {
                freshness = CacheMeta.freshnessOf(request.meta());
            } catch (IllegalArgumentException e) {
                return CallToolResult.builder()
                        .content(List.of(McpSchema.TextContent.builder(e.getMessage()).build()))
                        .isError(true)
                        .build();
            }
            Map<String, Object> args = request.arguments() == null ? Map.of() : request.arguments();
            Object id = origin.requestId();
            Object token = request.progressToken();
            ToolCallOutcome outcome;
            try {
                if (origin.person() != null) {
                    CALL_PERSON.set(origin.person());
                }
                if (token != null) {
                    CALL_PROGRESS.set(step -> {
                        ObjectNode params = Json.MAPPER.valueToTree(step);
                        params.set("progressToken", Json.MAPPER.valueToTree(token));
                        notifications.accept(McpSchema.METHOD_NOTIFICATION_PROGRESS, params);
                    });
                }
                // a cancel interrupts the call: the server is told (notifications/cancelled, or its
                // request ended) and the cache stores nothing, as for a run that ends mid-call
                outcome = calls.run(id, () -> callWithStatus(catalogName, args, origin.agent(),
                        freshness));
            } catch (CancellationException e) {
                // nobody reads this answer to a cancelled call, except while the server stops
                return ServeTools.shuttingDown();
            } finally {
                CALL_PROGRESS.remove();
                CALL_PERSON.remove();
            }
            return last.of(outcome.result().json(), CacheMeta.of(outcome.status(), outcome.storedAt(),
                    outcome.expiresAt(), outcome.notCachedBecause(), clock.instant()), Gateway::toCallResult);
        };
    }

    private static CallToolResult toCallResult(String json) {
        try {
            return Json.MAPPER.readValue(json, CallToolResult.class);
        } catch (JsonProcessingException e) {
            return CallToolResult.builder()
                    .content(List.of(McpSchema.TextContent.builder("the tool's answer is not a tool result: "
                            + e.getOriginalMessage()).build()))
                    .isError(true)
                    .build();
        }
    }
}
