package dev.execache.gateway;

import dev.execache.core.CachePolicy;
import dev.execache.core.CachedTool;
import dev.execache.core.Glob;
import dev.execache.core.ToolCacheRule;
import dev.execache.core.ToolValidator;
import dev.execache.core.spi.CatalogTool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
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

    /** Why a local server's read is not cached, in words for a person. */
    static final String LOCAL_READ = "a local server's read, asked every time so that a change on disk is seen at"
            + " once; a rule, cache: true or a ttl on the server, or its cache_hint: cache caches it";

    private final List<ToolCacheRule> rules;
    private final CachePolicy policy;
    private final Map<String, GatewayPolicy.Server> servers;
    private final List<Glob> writingNames = new ArrayList<>();
    /** Core's names of tools that change something, matched on the server's own name for the tool too. */
    private final List<Glob> coreWritingNames = CachedTool.MUTATING_TOOLS.stream().map(Glob::of).toList();

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

    /** How long an answer no rule or server gives a TTL is kept: the cache's TTL. */
    Duration cacheTtl() {
        return policy.ttl();
    }

    /**
     * @param cached whether calls are cached
     * @param why the rule, annotation or name that decided
     * @param ttl how long a cached call is kept; null when not cached
     * @param turnedOff not cached because caching, or a rule, turns it off (rather than because the call may
     *     change something)
     * @param freshRead a read-only tool of a local server, asked every time ({@link GatewayPolicy.Server#readsFresh}):
     *     not cached, yet a read whose answers a run may depend on and a revalidation may ask again; cached once its
     *     server says {@code cache_hint: cache}
     */
    public record Decision(boolean cached, String why, Duration ttl, boolean turnedOff, boolean freshRead) {
        public Decision(boolean cached, String why, Duration ttl, boolean turnedOff) {
            this(cached, why, ttl, turnedOff, false);
        }

        public Decision(boolean cached, String why, Duration ttl) {
            this(cached, why, ttl, false, false);
        }
    }

    /**
     * The rules the tool cache applies, in order: the rules as written, then one per server that has
     * its own settings ({@code cache: false}, or a {@code ttl}).
     */
    List<ToolCacheRule> cacheRules() {
        List<ToolCacheRule> all = new ArrayList<>(rules);
        for (GatewayPolicy.Server server : servers.values()) {
            if (!server.cache()) {
                all.add(ToolCacheRule.never(server.name() + "__*"));
            } else if (server.ttl() != null) {
                all.add(ToolCacheRule.cache(server.name() + "__*", server.ttl(), policy.maxEntries()));
            }
        }
        return all;
    }

    /**
     * As {@link #decide(CatalogTool)}, saying also whether its rule's validator ({@code validate_with})
     * revalidates its expired answers, or why it cannot, given the tools the servers offer now.
     */
    public Decision decide(CatalogTool tool, Map<String, CatalogTool> tools) {
        Decision decision = decide(tool);
        Optional<ToolValidator> validator = validatorOf(tool);
        if (!decision.cached() || validator.isEmpty()) {
            return decision;
        }
        Optional<String> problem = validatorProblem(tool, tools);
        String why = decision.why() + (problem.isEmpty() ? "; revalidated by " + validator.get().tool()
                : "; not revalidated: " + problem.get());
        return new Decision(true, why, decision.ttl(), decision.turnedOff(), decision.freshRead());
    }

    /** The validator the rule that matches {@code tool} names; empty when it names none. */
    Optional<ToolValidator> validatorOf(CatalogTool tool) {
        return ruleOf(tool).map(ToolCacheRule::validator);
    }

    /** The rule written for {@code tool} (the first that matches it); empty when none does. */
    Optional<ToolCacheRule> ruleOf(CatalogTool tool) {
        return rules.stream().filter(rule -> rule.tools().matches(tool.name())).findFirst();
    }

    /**
     * Why the validator the rule of {@code tool} names cannot revalidate its calls, given the tools
     * offered now: it is not offered, it may change something, or it takes an argument the call has
     * no way to fill. Empty when it can (or when the rule names none).
     */
    Optional<String> validatorProblem(CatalogTool tool, Map<String, CatalogTool> tools) {
        Optional<ToolValidator> found = validatorOf(tool);
        if (found.isEmpty()) {
            return Optional.empty();
        }
        ToolValidator validator = found.get();
        String rule = "validate_with ";
        CatalogTool check = tools.get(validator.tool());
        if (check == null) {
            return Optional.of(rule + validator.tool() + " is not a tool of any server");
        }
        if (hasWritingName(check)) {
            return Optional.of(rule + validator.tool() + " may change something (its name says so): a validator"
                    + " must be read-only");
        }
        if (check.annotationsTrusted() && !Boolean.TRUE.equals(check.readOnlyHint())) {
            return Optional.of(rule + validator.tool() + " is not read-only (its annotations do not say"
                    + " readOnlyHint: true)");
        }
        Set<String> callArguments = properties(tool);
        for (Map.Entry<String, String> argument : validator.arguments().entrySet()) {
            Optional<String> from = ToolValidator.placeholder(argument.getValue());
            if (from.isPresent() && callArguments != null && !callArguments.contains(from.get())) {
                return Optional.of(rule + "arguments." + argument.getKey() + ": " + tool.name() + " has no argument "
                        + from.get() + " (its arguments: " + String.join(", ", new TreeSet<>(callArguments)) + ")");
            }
        }
        Collection<String> filled = validator.arguments().isEmpty() ? callArguments : validator.arguments().keySet();
        if (filled != null) {
            for (String required : required(check)) {
                if (!filled.contains(required)) {
                    return Optional.of(rule + validator.tool() + " requires the argument " + required + ", which "
                            + (validator.arguments().isEmpty() ? tool.name() + " does not take (give arguments:"
                                    + " {" + required + ": \"{ARGUMENT}\"})" : "its arguments do not fill"));
                }
            }
        }
        return Optional.empty();
    }

    /** The arguments a tool's input schema names; null when it names none (any may be given). */
    private static Set<String> properties(CatalogTool tool) {
        if (tool.definition().get("inputSchema") instanceof Map<?, ?> schema
                && schema.get("properties") instanceof Map<?, ?> properties && !properties.isEmpty()) {
            Set<String> names = new TreeSet<>();
            properties.keySet().forEach(name -> names.add(String.valueOf(name)));
            return names;
        }
        return null;
    }

    private static List<String> required(CatalogTool tool) {
        if (tool.definition().get("inputSchema") instanceof Map<?, ?> schema
                && schema.get("required") instanceof List<?> required) {
            return required.stream().map(String::valueOf).toList();
        }
        return List.of();
    }

    /** Whether the tool's own name (not its server's) says it changes something. */
    private boolean hasWritingName(CatalogTool tool) {
        String own = tool.serverToolName();
        return writingNames.stream().anyMatch(glob -> glob.matches(own))
                || coreWritingNames.stream().anyMatch(glob -> glob.matches(own));
    }

    public Decision decide(CatalogTool tool) {
        if (!policy.enabled()) {
            return new Decision(false, "caching is off", null, true);
        }
        ToolCacheRule rule = rules.stream().filter(candidate -> candidate.tools().matches(tool.name())).findFirst()
                .orElse(null);
        boolean writingName = hasWritingName(tool);
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
            if (server != null && server.readsFresh()) {
                return new Decision(false, LOCAL_READ, null, true, true);
            }
            boolean ownTtl = server != null && server.ttl() != null;
            return new Decision(true, "annotation readOnlyHint" + (ownTtl ? ", server " + server.name() + ": ttl" : ""),
                    ownTtl ? server.ttl() : policy.ttl(), false);
        }
        return new Decision(false, "untrusted annotations, no rule", null);
    }
}
