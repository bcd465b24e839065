package dev.execache.core;

import dev.execache.core.spi.Counter;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * One tool call to make through {@link CachedTool#call}, as {@link ExecutionRequest} is one run of
 * code. Made with {@link #of} and the {@code with}/{@code readOf}/{@code uncached} methods, each
 * giving a new request.
 *
 * @param tool the tool's name (not blank)
 * @param arguments its arguments, a JSON-like object, in the order given; none when null
 * @param server the server whose writes make the answer stale ({@link CachedTool#advanceWriteGeneration}
 *     counts them, see {@link dev.execache.core.spi.WriteGenerations}); empty when no writes are counted
 * @param seenGeneration that server's write generation as the caller noted it before making the call
 *     ({@link CachedTool#writeGeneration}; code does, for its run); empty: noted by the cache on a
 *     miss, before the tool is asked. Either way the answer is stored only if the generation has not
 *     moved since
 * @param agent who asked (see {@link Agents}), made plain by {@link Agents#name}; its counters count the
 *     call. Null: counted in total and for the tool only. Never part of the key
 * @param freshness how fresh an answer the caller accepts: a stored answer older than it allows is not
 *     served; the tool is asked and a success replaces the stored answer. Never part of the key
 * @param uncached present when the caller decided itself that the call is not cached: the tool is asked
 *     without the cache and the call counted as that says
 * @param person whose answer it is (their subject), for a tool reached as each caller's person: part of the key, so
 *     that one person's answer is never served to another; null: the answer is nobody's in particular
 */
public record ToolCallRequest(String tool, Map<String, Object> arguments, Optional<String> server,
        OptionalLong seenGeneration, String agent, Freshness freshness, Optional<Uncached> uncached, String person) {

    /**
     * Why a call goes straight to the tool, as its caller decided.
     *
     * @param mayChange whether the call may change something: counted as uncacheable (a mutating call),
     *     else as bypassed (caching is turned off for it)
     * @param because why, in words for a person, said in the outcome ({@link ToolCallOutcome#notCachedBecause})
     * @param counter what the call is counted as for its tool, beside {@link Counter#CALLS}
     */
    public record Uncached(boolean mayChange, String because, Counter counter) {
        public Uncached {
            Objects.requireNonNull(because, "because must not be null");
            Objects.requireNonNull(counter, "counter must not be null");
        }

        /** Counted as uncacheable (a mutating call) when {@code mayChange}, else as bypassed. */
        public Uncached(boolean mayChange, String because) {
            this(mayChange, because, mayChange ? Counter.UNCACHEABLE_MUTATING_TOOL : Counter.BYPASSED);
        }

        /** The usual words for {@code mayChange}. */
        public static Uncached of(boolean mayChange) {
            return new Uncached(mayChange, mayChange ? "it may change something" : "caching is turned off for it");
        }
    }

    public ToolCallRequest {
        if (tool == null || tool.isBlank()) {
            throw new IllegalArgumentException("tool name must not be blank");
        }
        arguments = arguments == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(arguments));
        Objects.requireNonNull(server, "server must not be null (empty: no writes counted)");
        Objects.requireNonNull(seenGeneration, "seenGeneration must not be null (empty: noted on a miss)");
        if (seenGeneration.isPresent() && server.isEmpty()) {
            throw new IllegalArgumentException("seenGeneration is given for no server: name the server whose writes it counts");
        }
        server.ifPresent(name -> {
            if (name.isBlank()) {
                throw new IllegalArgumentException("server must not be blank");
            }
        });
        agent = Agents.name(agent);
        Objects.requireNonNull(freshness, "freshness must not be null");
        Objects.requireNonNull(uncached, "uncached must not be null (empty: through the cache)");
        if (person != null && person.isBlank()) {
            throw new IllegalArgumentException("person must not be blank (null: nobody's in particular)");
        }
    }

    /** As the canonical constructor, for nobody's answer in particular. */
    public ToolCallRequest(String tool, Map<String, Object> arguments, Optional<String> server,
            OptionalLong seenGeneration, String agent, Freshness freshness, Optional<Uncached> uncached) {
        this(tool, arguments, server, seenGeneration, agent, freshness, uncached, null);
    }

    /** A call of {@code tool} with {@code arguments}, through the cache, counting no server's writes, for no agent. */
    public static ToolCallRequest of(String tool, Map<String, ?> arguments) {
        return new ToolCallRequest(tool, arguments == null ? null : Collections.unmodifiableMap(arguments), Optional.empty(),
                OptionalLong.empty(), null, Freshness.ANY, Optional.empty());
    }

    /**
     * This call as a read of {@code server}, a server whose writes are counted: on a miss its write
     * generation is noted before the tool is asked, and the answer is stored only if it has not moved
     * since (else counted as {@link dev.execache.core.spi.Counter#UNCACHEABLE_STALE_TOOL_ANSWER}). A hit
     * costs nothing more.
     */
    public ToolCallRequest readOf(String server) {
        return new ToolCallRequest(tool, arguments, Optional.of(Objects.requireNonNull(server, "server must not be null")),
                OptionalLong.empty(), agent, freshness, uncached, person);
    }

    /** As {@link #readOf(String)}, with the generation the caller noted itself before making the call. */
    public ToolCallRequest readOf(String server, long seenGeneration) {
        return new ToolCallRequest(tool, arguments, Optional.of(Objects.requireNonNull(server, "server must not be null")),
                OptionalLong.of(seenGeneration), agent, freshness, uncached, person);
    }

    public ToolCallRequest withAgent(String newAgent) {
        return new ToolCallRequest(tool, arguments, server, seenGeneration, newAgent, freshness, uncached, person);
    }

    public ToolCallRequest withFreshness(Freshness newFreshness) {
        return new ToolCallRequest(tool, arguments, server, seenGeneration, agent, newFreshness, uncached, person);
    }

    /** This call as {@code subject}'s: its answer is theirs alone (see {@link #person}). */
    public ToolCallRequest forPerson(String subject) {
        return new ToolCallRequest(tool, arguments, server, seenGeneration, agent, freshness, uncached, subject);
    }

    /** This call straight to the tool, without the cache, for the reason given. */
    public ToolCallRequest uncached(Uncached why) {
        return new ToolCallRequest(tool, arguments, server, seenGeneration, agent, freshness,
                Optional.of(Objects.requireNonNull(why, "why must not be null")), person);
    }

    /** As {@link #uncached(Uncached)} with the usual words ({@link Uncached#of}). */
    public ToolCallRequest uncached(boolean mayChange) {
        return uncached(Uncached.of(mayChange));
    }
}
