package dev.execache.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.execache.core.CacheListener;
import dev.execache.core.CachePolicy;
import dev.execache.core.CacheStore;
import dev.execache.core.CachedTool;
import dev.execache.core.CatalogTool;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.ToolCacheRule;
import dev.execache.core.ToolCatalog;
import dev.execache.core.ToolResult;
import dev.execache.core.ToolStats;
import dev.execache.tools.mcp.McpToolCatalog;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.lang.System.Logger.Level;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.stream.Collectors;

/**
 * The downstream servers' tools as {@code serve} offers them: each as {@code SERVER__TOOL},
 * called through {@link CachedTool} when {@link ToolCallRules} says so. A call that may write
 * drops the cached reads of its server (unless the server says {@code invalidate_on_write: none}).
 * Each tool's version is its digest; a new digest drops that tool's entries.
 */
final class ProxiedTools {
    private static final System.Logger LOG = System.getLogger("dev.execache.cli");

    private final ToolCatalog catalog;
    private final MutableToolVersions versions;
    private final ToolCallRules rules;
    private final Set<String> invalidatedOnWrite;
    private final CachedTool cachedTool;
    private Map<String, CatalogTool> current = Map.of();
    private Map<String, CatalogTool> offered = Map.of();
    private BiConsumer<List<SyncToolSpecification>, List<String>> offer;

    ProxiedTools(ToolCatalog catalog, CacheStore store, MutableToolVersions versions, GatewayConfig config,
            CachePolicy policy, Clock clock) {
        this.catalog = catalog;
        this.versions = versions;
        this.rules = new ToolCallRules(config.rules(), policy);
        this.invalidatedOnWrite = config.servers().stream().filter(GatewayConfig.Server::invalidateOnWrite)
                .map(server -> server.settings().name()).collect(Collectors.toSet());
        CachedTool.Builder builder = CachedTool.builder(catalog::call, store)
                .defaultRule(policy.enabled(), policy.ttl(), policy.maxEntries())
                .toolVersions(versions)
                .clock(clock)
                .listener(new CacheListener() {
                    @Override
                    public void onInvalidation(String tool, int removed) {
                        LOG.log(Level.INFO, "tool " + tool + " changed: removed " + removed
                                + (removed == 1 ? " cached call" : " cached calls"));
                    }
                });
        for (ToolCacheRule rule : config.rules()) {
            builder.rule(rule);
        }
        this.cachedTool = builder.build();
        catalog.addListener(this::toolsChanged);
        toolsChanged(catalog.tools());
    }

    /** Starts the configured servers (waiting at most the run timeout for them) and returns their catalog. */
    static McpToolCatalog startCatalog(Settings settings) {
        System.Logger downstream = System.getLogger("dev.execache.downstream");
        return new McpToolCatalog(settings.gateway().servers().stream().map(GatewayConfig.Server::settings).toList(),
                settings.limits().timeout(), settings.gateway().rediscoverEvery(),
                line -> downstream.log(Level.INFO, line), Clock.systemUTC()).start();
    }

    /** Hits and misses per proxied tool, counted in this process. */
    Map<String, ToolStats> stats() {
        return cachedTool.stats();
    }

    ToolCallRules rules() {
        return rules;
    }

    /** The tools to offer now; later changes go to {@link #onChange}. */
    synchronized List<SyncToolSpecification> specifications() {
        offered = current;
        return current.values().stream().map(this::specification).toList();
    }

    /** Where to send changes of the offered tools: those to add or replace, and the names to withdraw. */
    synchronized void onChange(BiConsumer<List<SyncToolSpecification>, List<String>> sink) {
        this.offer = sink;
        tellOffer();
    }

    ToolResult call(String name, Map<String, Object> args) {
        CatalogTool tool;
        synchronized (this) {
            tool = current.get(name);
        }
        if (tool == null) {
            return catalog.call(name, args);
        }
        if (rules.decide(tool).cached()) {
            return cachedTool.call(name, args);
        }
        try {
            return catalog.call(name, args);
        } finally {
            if (invalidatedOnWrite.contains(tool.server())) {
                int removed = cachedTool.clear(tool.server() + "__*");
                if (removed > 0) {
                    LOG.log(Level.INFO, name + " may have changed server " + tool.server() + ": removed " + removed
                            + (removed == 1 ? " cached call" : " cached calls") + " of its tools");
                }
            }
        }
    }

    private void toolsChanged(List<CatalogTool> tools) {
        for (CatalogTool tool : tools) {
            versions.set(tool.name(), tool.version());
        }
        synchronized (this) {
            Map<String, CatalogTool> now = new LinkedHashMap<>();
            tools.forEach(tool -> now.put(tool.name(), tool));
            current = now;
            tellOffer();
        }
    }

    private void tellOffer() {
        if (offer == null) {
            return;
        }
        List<SyncToolSpecification> changed = new ArrayList<>();
        current.forEach((name, tool) -> {
            if (!tool.equals(offered.get(name))) {
                changed.add(specification(tool));
            }
        });
        List<String> withdrawn = offered.keySet().stream().filter(name -> !current.containsKey(name)).toList();
        offered = current;
        if (!changed.isEmpty() || !withdrawn.isEmpty()) {
            offer.accept(changed, withdrawn);
        }
    }

    private SyncToolSpecification specification(CatalogTool tool) {
        Map<String, Object> definition = new LinkedHashMap<>(tool.definition());
        definition.put("name", tool.name());
        McpSchema.Tool described = Output.JSON.convertValue(definition, McpSchema.Tool.class);
        return SyncToolSpecification.builder()
                .tool(described)
                .callHandler((exchange, request) -> toCallResult(call(tool.name(),
                        request.arguments() == null ? Map.of() : request.arguments())))
                .build();
    }

    private static CallToolResult toCallResult(ToolResult result) {
        try {
            return Output.JSON.readValue(result.json(), CallToolResult.class);
        } catch (JsonProcessingException e) {
            return CallToolResult.builder()
                    .content(List.of(McpSchema.TextContent.builder("the tool's answer is not a tool result: "
                            + e.getOriginalMessage()).build()))
                    .isError(true)
                    .build();
        }
    }
}
