package dev.execache.core;

import dev.execache.core.spi.CacheEntry;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * One piece of agent code to run.
 *
 * @param code the body of an async function: {@code return} gives the result
 * @param context a JSON-like value (Map, List, String, Number, Boolean, null) the code sees as
 *     {@code context}
 * @param tools the tools the code depends on; their versions are part of the cache key
 * @param limits what the run may use
 * @param label what a person recognises the run by (a file name, the code's first line); stored with
 *     its result, never part of the key; empty when not given
 * @param agent who asked (see {@link Agents}), made plain by {@link Agents#name}; its counters count
 *     the run (and the tool calls its code makes). Null: counted in total only. Never part of the key
 * @param freshness how fresh a result the caller accepts; the run's tool calls are asked as fresh.
 *     Null: {@link Freshness#ANY}. Never part of the key
 */
public record ExecutionRequest(String code, Object context, Set<String> tools, Limits limits, String label,
        String agent, Freshness freshness) {

    public ExecutionRequest {
        Objects.requireNonNull(code, "code must not be null");
        CanonicalJson.write(context, "context");
        tools = Set.copyOf(new TreeSet<>(Objects.requireNonNull(tools, "tools must not be null")));
        for (String tool : tools) {
            if (tool.isBlank()) {
                throw new IllegalArgumentException("tools must not contain a blank name");
            }
        }
        Objects.requireNonNull(limits, "limits must not be null");
        label = CacheEntry.label(label);
        agent = Agents.name(agent);
        freshness = freshness == null ? Freshness.ANY : freshness;
    }

    public ExecutionRequest(String code, Object context, Set<String> tools, Limits limits, String label,
            String agent) {
        this(code, context, tools, limits, label, agent, Freshness.ANY);
    }

    public ExecutionRequest(String code, Object context, Set<String> tools, Limits limits, String label) {
        this(code, context, tools, limits, label, null);
    }

    public ExecutionRequest(String code, Object context, Set<String> tools, Limits limits) {
        this(code, context, tools, limits, "", null);
    }

    public static ExecutionRequest of(String code, Object context) {
        return new ExecutionRequest(code, context, Set.of(), Limits.DEFAULTS);
    }

    /** The context as canonical JSON text. */
    public String contextJson() {
        return CanonicalJson.write(context, "context");
    }

    public ExecutionRequest withTools(Set<String> newTools) {
        return new ExecutionRequest(code, context, newTools, limits, label, agent, freshness);
    }

    public ExecutionRequest withLimits(Limits newLimits) {
        return new ExecutionRequest(code, context, tools, newLimits, label, agent, freshness);
    }

    public ExecutionRequest withLabel(String newLabel) {
        return new ExecutionRequest(code, context, tools, limits, newLabel, agent, freshness);
    }

    public ExecutionRequest withAgent(String newAgent) {
        return new ExecutionRequest(code, context, tools, limits, label, newAgent, freshness);
    }

    public ExecutionRequest withFreshness(Freshness newFreshness) {
        return new ExecutionRequest(code, context, tools, limits, label, agent, newFreshness);
    }

    /** The label a person would give this code when no one gave one: its first non-blank line. */
    public String labelOrFirstLine() {
        if (!label.isEmpty()) {
            return label;
        }
        return code.lines().map(String::strip).filter(line -> !line.isEmpty()).findFirst().orElse("");
    }
}
