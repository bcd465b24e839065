package dev.execache.mcp.server;

import dev.execache.core.CachePolicy;
import dev.execache.core.CachedTool;
import dev.execache.core.Glob;
import dev.execache.core.ToolCacheRule;
import dev.execache.core.spi.CatalogTool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

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
    private final List<Glob> writingNames = new ArrayList<>();
    private final List<Glob> writingFullNames = CachedTool.MUTATING_TOOLS.stream().map(Glob::of).toList();

    /** @param policy whether caching is on, and the TTL of a tool cached for its annotation */
    public ToolCallRules(List<ToolCacheRule> rules, CachePolicy policy) {
        this.rules = List.copyOf(rules);
        this.policy = policy;
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
     */
    public record Decision(boolean cached, String why, Duration ttl, boolean turnedOff) {
        public Decision(boolean cached, String why, Duration ttl) {
            this(cached, why, ttl, false);
        }
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
        if (tool.annotationsTrusted()) {
            return new Decision(true, "annotation readOnlyHint", policy.ttl());
        }
        return new Decision(false, "untrusted annotations, no rule", null);
    }
}
