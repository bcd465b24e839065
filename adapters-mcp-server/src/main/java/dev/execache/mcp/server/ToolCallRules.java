package dev.execache.mcp.server;

import dev.execache.core.CachePolicy;
import dev.execache.core.CachedTool;
import dev.execache.core.Glob;
import dev.execache.core.ToolCacheRule;
import dev.execache.core.spi.CatalogTool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Whether calls of a gateway tool are cached, and why. A rule (glob on {@code SERVER__TOOL},
 * first match wins) decides; without one, a trusted server's {@code readOnlyHint: true} does.
 * A tool whose name says it changes something, or whose trusted annotations do not say it
 * is read-only, is cached only by a rule that names it exactly.
 */
public final class ToolCallRules {
    /** Names of tools that change something, matched on the server's own name for the tool. */
    static final List<String> WRITING_NAMES = List.of("write*", "edit*", "create*", "update*", "delete*",
            "remove*", "move*", "rename*", "deploy*", "bash");

    private final List<ToolCacheRule> rules;
    private final CachePolicy policy;
    private final Map<String, GatewayPolicy.Server> servers;
    private final List<Glob> writingNames = new ArrayList<>();
    private final List<Glob> writingFullNames = CachedTool.MUTATING_TOOLS.stream().map(Glob::of).toList();

    /** @param policy whether caching is on, and the TTL of a tool cached for its annotation */
    public ToolCallRules(List<ToolCacheRule> rules, CachePolicy policy) {
        this(rules, policy, List.of());
    }

    /** @param servers each server's own settings ({@code cache}, {@code ttl}), under the rules */
    public ToolCallRules(List<ToolCacheRule> rules, CachePolicy policy, List<GatewayPolicy.Server> servers) {
        this.rules = List.copyOf(rules);
        this.policy = policy;
        this.servers = servers.stream().collect(Collectors.toUnmodifiableMap(GatewayPolicy.Server::name,
                Function.identity(), (first, second) -> first));
        WRITING_NAMES.forEach(name -> writingNames.add(Glob.of(name)));
    }

    List<ToolCacheRule> rules() {
        return rules;
    }

    /**
     * @param cached whether calls are cached
     * @param why the rule, annotation or name that decided
     * @param ttl how long a cached call is kept; null when not cached
     * @param turnedOff not cached because caching, or a rule, turns it off (rather than because the call may
     *     change something)
     * @param measured cached only while it answers slower than the threshold (no rule names it)
     */
    public record Decision(boolean cached, String why, Duration ttl, boolean turnedOff, boolean measured) {
        public Decision(boolean cached, String why, Duration ttl, boolean turnedOff) {
            this(cached, why, ttl, turnedOff, false);
        }

        public Decision(boolean cached, String why, Duration ttl) {
            this(cached, why, ttl, false, false);
        }
    }

    /**
     * The rules the tool cache applies, in order: the rules as written, then one per server that has
     * its own settings ({@code cache: false}, or a {@code ttl}, measured as the default rule is).
     */
    List<ToolCacheRule> cacheRules() {
        List<ToolCacheRule> all = new ArrayList<>(rules);
        for (GatewayPolicy.Server server : servers.values()) {
            if (!server.cache()) {
                all.add(ToolCacheRule.never(server.name() + "__*"));
            } else if (server.ttl() != null) {
                all.add(ToolCacheRule.cache(server.name() + "__*", server.ttl(), policy.maxEntries()).measured(true));
            }
        }
        return all;
    }

    public Decision decide(CatalogTool tool) {
        if (!policy.enabled()) {
            return new Decision(false, "caching is off", null, true);
        }
        ToolCacheRule rule = rules.stream().filter(candidate -> candidate.tools().matches(tool.name())).findFirst()
                .orElse(null);
        String bare = tool.serverToolName();
        boolean writingName = writingNames.stream().anyMatch(glob -> glob.matches(bare))
                || writingFullNames.stream().anyMatch(glob -> glob.matches(tool.name()));
        boolean notReadOnly = tool.annotationsTrusted() && !Boolean.TRUE.equals(tool.readOnlyHint());
        if (writingName || notReadOnly) {
            String what = writingName ? "never-cache name" : "not read-only (annotations)";
            if (rule != null && rule.toolGlob().equals(tool.name())) {
                return rule.enabled() ? new Decision(true, "rule " + rule.toolGlob() + " names it ("
                        + what + ")", rule.ttl()) : new Decision(false, "rule " + rule.toolGlob() + ": disabled", null, true);
            }
            return new Decision(false, what, null);
        }
        if (rule != null) {
            return rule.enabled() ? new Decision(true, "rule " + rule.toolGlob(), rule.ttl())
                    : new Decision(false, "rule " + rule.toolGlob() + ": disabled", null, true);
        }
        GatewayPolicy.Server server = servers.get(tool.server());
        if (server != null && !server.cache()) {
            return new Decision(false, "server " + server.name() + ": cache: false", null, true);
        }
        if (tool.annotationsTrusted()) {
            boolean ownTtl = server != null && server.ttl() != null;
            return new Decision(true, "annotation readOnlyHint" + (ownTtl ? ", server " + server.name() + ": ttl" : ""),
                    ownTtl ? server.ttl() : policy.ttl(), false, true);
        }
        return new Decision(false, "untrusted annotations, no rule", null);
    }
}
