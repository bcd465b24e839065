package dev.execache.core;

import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.CacheStore;
import dev.execache.core.spi.Counter;
import dev.execache.core.spi.GroupBound;
import dev.execache.core.spi.ToolVersionSource;
import dev.execache.core.spi.WriteGenerations;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

/**
 * Caches agent tool calls by the same policy as code ({@link CachedExecutor}); both run one
 * policy loop: look up, single flight, call, store only a success, count.
 *
 * <ul>
 *   <li><b>Rules</b> are chosen by glob on the tool name, first match wins; tools no rule
 *       matches get the default rule (cached, 5 minutes, 100 entries). Mutating tools
 *       ({@link #MUTATING_TOOLS}) are never cached unless an enabled rule names one exactly;
 *       a failed call ({@link ToolResult#isError()}) or a tool's exception is never cached.
 *   <li><b>Single flight</b>: identical calls made at once call the tool once; the others get
 *       its answer. On a store that coordinates a fleet (Redis), across processes too.
 *   <li><b>Bounds</b>: each rule's {@code maxEntries} is a group bound kept by the store, so it
 *       holds after {@link Policy#clear}, invalidation or another process's calls.
 *   <li><b>Counters</b> live in the store, per tool and in total: {@link Policy#stats()} here,
 *       {@code execache stats} and every process sharing the store see the same figures.
 *   <li><b>Invalidation</b>: when the {@link ToolVersionSource} reports a tool's new version,
 *       every entry made with its old version is removed; those made with another version (by
 *       another project on the same store) stay. {@link Policy#invalidateTool} removes every version's.
 *   <li><b>Time</b>: a {@link java.time.Clock} for ages and expiry, a {@link Ticker} for how
 *       long a call took and how much a hit saved.
 * </ul>
 *
 * A failing store never fails a call: the call goes to the tool uncached.
 */
public final class CachedTool {
    /** Tools that change the world; never cached unless a rule names one exactly. */
    public static final List<String> MUTATING_TOOLS =
            List.of("write*", "edit*", "bash", "*create*", "*update*", "*delete*", "*deploy*");
    /** How long a fleet-wide flight of one call may be held unless the builder says otherwise. */
    public static final Duration DEFAULT_FLIGHT_HOLD = Duration.ofSeconds(60);

    private final ToolInvoker invoker;
    private final StoreGuard store;
    private final PolicyLoop loop;
    /** The rules in order. */
    private final List<ToolCacheRule> rules;
    /** Which rule applies to a tool never changes after building: decided once per tool name. */
    private final Map<String, Optional<ToolCacheRule>> ruleByTool = new ConcurrentHashMap<>();
    private final ToolCacheRule defaultRule;
    private final ToolCallKeyGenerator keyGenerator;
    private final ToolVersionSource toolVersions;
    private final Clock clock;
    private final Duration flightHold;
    private final List<CacheListener> listeners;
    /** The group the answers kept for revalidation form in the store, per rule: their own bound and LRU. */
    private static final String KEPT_GROUP = "execache:revalidation:tool:";
    private static final System.Logger LOG = System.getLogger("dev.execache.core");
    private final List<Glob> mutating = MUTATING_TOOLS.stream().map(Glob::of).toList();
    private final Predicate<String> validatorUsable;
    /** How long an answer with a validator is kept for revalidation after it was stored. */
    private final Duration keepForRevalidation;
    private final Policy policy = new Policy();

    private CachedTool(Builder builder) {
        this.invoker = builder.invoker;
        this.loop = builder.loop();
        this.store = loop.store();
        rules = List.copyOf(builder.rules);
        this.defaultRule = builder.defaultRule;
        this.keyGenerator = builder.keyGenerator;
        this.toolVersions = builder.toolVersions();
        this.clock = loop.clock();
        this.flightHold = builder.flightHold;
        this.validatorUsable = builder.validatorUsable;
        this.keepForRevalidation = builder.keepForRevalidation;
        this.listeners = new CopyOnWriteArrayList<>(builder.listeners);
        toolVersions.addListener(this::invalidate);
    }

    /**
     * A builder of a tool cache that asks {@code invoker} and keeps answers in the store {@code store}
     * guards; give the same guard to every face on that store ({@link StoreGuard#of}).
     */
    public static Builder builder(ToolInvoker invoker, StoreGuard store) {
        return new Builder(invoker, store);
    }

    /** As {@link #builder(ToolInvoker, StoreGuard)}, with a guard of its own: for a tool cache alone on its store. */
    public static Builder builder(ToolInvoker invoker, CacheStore store) {
        return new Builder(invoker, StoreGuard.of(store));
    }

    /**
     * Makes the call: returns the tool's cached answer, or asks the tool, and says how the answer came
     * (hit, miss, shared, revalidated, or bypass for a call that is not cached). Exceptions of the
     * tool pass through, uncached, to this caller and to every identical call that waited on it.
     *
     * @throws IllegalArgumentException if the arguments of a call that may be cached are not JSON-like
     */
    public ToolCallOutcome call(ToolCallRequest request) {
        Objects.requireNonNull(request, "request must not be null");
        return store.oneCall(() -> request.uncached().isPresent() ? callUncachedOnce(request) : callOnce(request));
    }

    /** The write generation of {@code server} now, or empty if the store cannot say (then nothing that read it is stored). */
    public OptionalLong writeGeneration(String server) {
        return store.writeGeneration(server);
    }

    /**
     * Counts the start or the end of a call that may write to {@code server}, fleet-wide on a
     * shared store; a caller counts both, and after the end removes the server's cached reads.
     *
     * @return whether the store counted it
     */
    public boolean advanceWriteGeneration(String server) {
        return store.advanceWriteGeneration(server);
    }

    private ToolCallOutcome callOnce(ToolCallRequest request) {
        String tool = request.tool();
        Map<String, Object> arguments = request.arguments();
        String agent = request.agent();
        Optional<ToolCacheRule> rule = ruleFor(tool);
        if (rule.isEmpty()) {
            boolean mayChange = isMutating(tool);
            return callUncachedOnce(request.uncached(new ToolCallRequest.Uncached(mayChange,
                    mayChange ? "it may change something (its name says so)" : "caching is turned off for it")));
        }
        String key = keyOf(tool, arguments, request.person());
        ToolValidator validator = rule.get().validator();
        Map<String, Object> validatorArguments = validator == null || !validatorUsable.test(tool) ? null
                : validator.fill(arguments).orElse(null);
        Call call = new Call(request, key, rule.get(), validatorArguments == null ? null : validator.tool(),
                validatorArguments);
        PolicyLoop.Outcome<ToolResult> outcome = loop.serve(call);
        switch (outcome.status()) {
            case HIT -> listeners.forEach(listener -> listener.onHit(tool, key));
            case SHARED -> listeners.forEach(listener -> listener.onShared(tool, key));
            case REVALIDATED -> { }
            default -> listeners.forEach(listener -> listener.onMiss(tool, key));
        }
        if (outcome.expiresAt() != null && (outcome.status() == CacheStatus.MISS
                || outcome.status() == CacheStatus.REVALIDATED)) {
            call.keepForRevalidation();
        }
        for (String evicted : outcome.evicted()) {
            listeners.forEach(listener -> listener.onEviction(rule.get().toolGlob(), evicted));
        }
        String because = outcome.status() == CacheStatus.STORE_ERROR ? "the store is unavailable"
                : outcome.notStored() == null ? null
                : outcome.result().hint() == CacheHint.AGENT_ANSWERED ? "the server asked the agent during the call"
                        + " (sampling, elicitation or roots): the answer is that agent's, at that moment"
                : notStoredBecause(tool, outcome.notStored());
        return new ToolCallOutcome(outcome.result(), outcome.status(), outcome.expiresAt(), outcome.storedAt(), because);
    }

    /** Why a call's answer was not stored, in words for a person. */
    private String notStoredBecause(String tool, Counter counter) {
        return switch (counter) {
            case FAILED -> "the call failed";
            case UNCACHEABLE_SERVER_HINT -> "the server said not to cache it (cache_hint: no-cache)";
            case UNCACHEABLE_STALE_TOOL_ANSWER -> "a call that may change its server started or ended while it was asked";
            default -> counter.uncacheableReason() == null ? counter.name().toLowerCase(Locale.ROOT)
                    : counter.uncacheableReason().replace('_', ' ');
        };
    }

    /**
     * Asks the tool without the cache, as the request's {@link ToolCallRequest#uncached} says, and counts
     * the call for the tool under the counter it names.
     */
    private ToolCallOutcome callUncachedOnce(ToolCallRequest request) {
        ToolCallRequest.Uncached why = request.uncached().orElseThrow();
        try {
            return ToolCallOutcome.notCached(invoker.invoke(request.tool(), request.arguments()), CacheStatus.BYPASS,
                    why.because());
        } finally {
            store.count(request.tool(), request.agent(), Map.of(Counter.CALLS, 1L, why.counter(), 1L));
        }
    }

    /**
     * Matched on the tool's own name: of a gateway tool ({@code SERVER__TOOL}) the part after its server's name, which
     * says nothing of what the tool does (a server named {@code deployments} has read-only tools too).
     */
    private boolean isMutating(String tool) {
        int server = tool.indexOf("__");
        String own = server < 0 ? tool : tool.substring(server + 2);
        return mutating.stream().anyMatch(glob -> glob.matches(own));
    }

    /**
     * What the tool cache was built with and its rare operations, apart from calling (as Caffeine's
     * {@code Cache.policy()}, and as {@link CachedExecutor#policy()}): a decorator or a reader of the
     * tool cache needs only {@link CachedTool#call}, the write generations and this.
     */
    public Policy policy() {
        return policy;
    }

    /** See {@link CachedTool#policy()}. */
    public final class Policy {
        private Policy() {
        }

        /**
         * Removes every entry that depended on any of {@code tools} (cached calls, and runs of code
         * that called them), without counting them as invalidations: a write made them stale, not a
         * new version. Returns how many.
         */
        public int removeDependents(Iterable<String> tools) {
            int removed = 0;
            for (String tool : tools) {
                removed += store.removeByTool(tool);
            }
            loop.countRemoved(null, removed, RemovalCause.WRITE);
            return removed;
        }

        /** Whether calls of {@code tool} are cached. */
        public boolean isCached(String tool) {
            return ruleFor(tool).isPresent();
        }

        /**
         * Removes the cached calls of every tool matching {@code toolGlob}, and the runs of code that
         * used them; returns how many.
         */
        public int clear(String toolGlob) {
            return clear(toolGlob, RemovalCause.HAND);
        }

        /**
         * As {@link #clear(String)}, the removals counted as invalidations of {@code cause} (a write to
         * the server, a resource it said was updated, by hand).
         */
        public int clear(String toolGlob, RemovalCause cause) {
            Objects.requireNonNull(cause, "cause must not be null");
            Glob glob = Glob.of(toolGlob);
            int removed = store.removeByPattern(Glob.of(keyGenerator.pattern(toolGlob)));
            for (String tool : toolVersions.versions().keySet()) {
                if (glob.matches(tool)) {
                    removed += store.removeByTool(tool);
                }
            }
            loop.countRemoved(null, removed, cause);
            return removed;
        }

        /**
         * Removes the cached answer of one call (as {@link #keyFor} names it), counted as an invalidation of
         * {@code cause}; returns whether there was one.
         */
        public boolean remove(String tool, Map<String, ?> args, RemovalCause cause) {
            Objects.requireNonNull(cause, "cause must not be null");
            boolean removed = store.remove(keyFor(tool, args));
            loop.countRemoved(null, removed ? 1 : 0, cause);
            return removed;
        }

        /** Removes every cached call made with {@code tool}, as a version change does; returns how many. */
        public int invalidateTool(String tool) {
            return invalidate(tool, null, null).removed();
        }

        /** The cache key of this call, as it would be looked up now. */
        public String keyFor(String tool, Map<String, ?> args) {
            return keyOf(tool, args == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(args)));
        }

        /** What the cache holds for this call, without counting a hit. */
        public Optional<ToolCallInfo> inspect(String tool, Map<String, ?> args) {
            String key = keyFor(tool, args);
            Instant now = clock.instant();
            return store.peek(key)
                    .map(entry -> new ToolCallInfo(key, Duration.between(entry.createdAt(), now),
                            Duration.between(now, entry.expiresAt()), entry.hits(), entry.toolVersions()));
        }

        /** Hits, misses, latency saved and invalidations per tool, as the store counted them (fleet-wide on Redis). */
        public Map<String, ToolStats> stats() {
            Map<String, ToolStats> stats = new TreeMap<>();
            store.toolCounters().forEach((tool, counters) -> stats.put(tool, ToolStats.from(counters)));
            return stats;
        }

        public void addListener(CacheListener listener) {
            listeners.add(Objects.requireNonNull(listener, "listener must not be null"));
        }

        /** The rule that applies to {@code tool}; empty when its calls are not cached. */
        public Optional<ToolCacheRule> ruleOf(String tool) {
            return ruleFor(tool);
        }
    }

    private Invalidation invalidate(String tool, String oldVersion, String newVersion) {
        Invalidation invalidation = loop.invalidate(tool, oldVersion, newVersion);
        listeners.forEach(listener -> listener.onInvalidation(tool, invalidation.removed()));
        return invalidation;
    }

    private Optional<ToolCacheRule> ruleFor(String tool) {
        if (tool == null || tool.isBlank()) {
            throw new IllegalArgumentException("tool name must not be blank");
        }
        return ruleByTool.computeIfAbsent(tool, this::decideRule);
    }

    private Optional<ToolCacheRule> decideRule(String tool) {
        boolean isMutating = isMutating(tool);
        for (ToolCacheRule rule : rules) {
            if (rule.tools().matches(tool)) {
                boolean allowed = rule.enabled() && (!isMutating || rule.namesExactly(tool));
                return allowed ? Optional.of(rule) : Optional.empty();
            }
        }
        return defaultRule.enabled() && !isMutating ? Optional.of(defaultRule) : Optional.empty();
    }

    private String keyOf(String tool, Map<String, Object> args) {
        return keyOf(tool, args, null);
    }

    /** A person's call is keyed as a version of the tool of their own, so that no other person's key can meet it. */
    private String keyOf(String tool, Map<String, Object> args, String person) {
        String version = toolVersions.versions().get(tool);
        return keyGenerator.key(tool, CanonicalJson.write(args, tool + ".args"), person == null ? version
                : (version == null ? "" : version) + "\nperson " + CanonicalJson.write(person, "person"));
    }

    /** One tool call as the policy loop sees it. */
    private final class Call implements PolicyLoop.Call<ToolResult> {
        private final String tool;
        private final Map<String, Object> arguments;
        private final String key;
        private final ToolCacheRule rule;
        /** The server whose writes make the answer stale, or null; and its generation as noted before the call. */
        private final String server;
        private volatile Long seen;
        private final String agent;
        private final Freshness freshness;
        private volatile Counter notStored;
        /** The rule's validator and its arguments for this call; null when the call has none. */
        private final String validator;
        private final Map<String, Object> validatorArguments;
        /** Whether the validator was asked for this call, and the digest of its answer (null: none to keep). */
        private volatile boolean validatorAsked;
        private volatile String validatorDigest;
        /** The copy kept for revalidation whose answer stands (the validator answered as before); null otherwise. */
        private volatile CacheEntry revalidatedFrom;
        /** The entry made for the answer, to keep a copy of once it is stored. */
        private volatile CacheEntry stored;

        Call(ToolCallRequest request, String key, ToolCacheRule rule, String validator,
                Map<String, Object> validatorArguments) {
            this.validator = validator;
            this.validatorArguments = validatorArguments;
            this.freshness = request.freshness();
            this.tool = request.tool();
            this.arguments = request.arguments();
            this.key = key;
            this.rule = rule;
            this.server = request.server().orElse(null);
            this.seen = request.seenGeneration().isPresent() ? request.seenGeneration().getAsLong() : null;
            this.agent = request.agent();
        }

        @Override public String agent() { return agent; }
        @Override public Freshness freshness() { return freshness; }

        @Override
        public Optional<Map<String, Long>> writesSeen() {
            if (server == null) {
                return Optional.of(Map.of());
            }
            Long noted = seen;
            return noted == null ? Optional.empty() : Optional.of(Map.of(server, noted));
        }

        @Override
        public ToolResult run() {
            noteGeneration();
            if (validator != null && !validatorAsked) {
                // asked before the tool: a change between the two makes the next revalidation differ, never hide
                askValidator();
            }
            return invoker.invoke(tool, arguments);
        }

        private void noteGeneration() {
            if (server != null && seen == null) {
                OptionalLong now = store.writeGeneration(server);
                seen = now.isPresent() ? now.getAsLong() : null;
            }
        }

        /** Asks the validator fresh (never from the cache); its answer's digest, or null when it failed. */
        private String askValidator() {
            validatorAsked = true;
            try {
                ToolResult answer = invoker.invoke(validator, validatorArguments);
                store.count(validator, agent, Map.of(Counter.CALLS, 1L));
                validatorDigest = answer.isError() ? null : RunTrace.digestOf(answer);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.INFO, "validator " + validator + " of " + tool + " failed ("
                        + e.getMessage() + "): asking the tool");
                validatorDigest = null;
            }
            return validatorDigest;
        }

        /**
         * When the answer kept for revalidation has a validator answer recorded: asks the validator,
         * and if it answers as then, the kept answer stands.
         */
        @Override
        public Optional<ToolResult> revalidate() {
            if (validator == null || freshness.isNoCache()) {
                // no-cache asks the tool itself; the validator's answer is still recorded for the next caller
                return Optional.empty();
            }
            Optional<CacheEntry> copy = store.get(PolicyLoop.keptKey(key));
            if (copy.isEmpty()) {
                return Optional.empty();
            }
            if (!copy.get().isIntact() || copy.get().toolVersions().get(CacheEntry.VALIDATOR) == null) {
                store.remove(copy.get().key());
                return Optional.empty();
            }
            noteGeneration();
            String digest = askValidator();
            if (digest == null || !digest.equals(copy.get().toolVersions().get(CacheEntry.VALIDATOR))) {
                LOG.log(System.Logger.Level.DEBUG, "revalidation of " + key + ": " + validator
                        + " answered otherwise, asking " + tool);
                return Optional.empty();
            }
            revalidatedFrom = copy.get();
            return Optional.of(ToolResult.ok(copy.get().value()));
        }

        @Override
        public Duration ranFor(ToolResult result) {
            CacheEntry from = revalidatedFrom;
            return from == null ? Duration.ZERO : from.executionTime();
        }

        /** Keeps a copy of the answer just stored, with its validator's answer digest, for revalidation. */
        void keepForRevalidation() {
            CacheEntry entry = stored;
            String digest = validatorDigest;
            if (entry == null || digest == null || keepForRevalidation.isZero()) {
                return;
            }
            Instant storedAt = entry.createdAt();
            store.put(new CacheEntry(PolicyLoop.keptKey(key), entry.value(), "", entry.executionTime(),
                    Map.of(CacheEntry.VALIDATOR, digest), storedAt, storedAt.plus(keepForRevalidation), 0,
                    entry.label()), new GroupBound(KEPT_GROUP + rule.toolGlob(), rule.maxEntries()));
        }

        @Override public String key() { return key; }
        @Override public String tool() { return tool; }
        @Override public Duration maxHold() { return flightHold; }
        @Override public GroupBound bound() { return new GroupBound("tool:" + rule.toolGlob(), rule.maxEntries()); }
        @Override public ToolResult fromEntry(CacheEntry entry) { return ToolResult.ok(entry.value()); }
        @Override public boolean sharable(ToolResult result) { return result.hint() != CacheHint.AGENT_ANSWERED; }
        @Override public Counter whyNotStored(ToolResult result) { return notStored == null ? Counter.FAILED : notStored; }

        @Override
        public Optional<CacheEntry> entryFor(ToolResult result, Duration took) {
            CacheEntry from = revalidatedFrom;
            if (from != null) {
                // a revalidated answer: renewed as a new answer, keeping what asking the tool took
                Instant now = clock.instant();
                stored = new CacheEntry(key, from.value(), "", from.executionTime(), dependsOn(), now,
                        now.plus(rule.ttl()), 0, label(tool, arguments));
                return Optional.of(stored);
            }
            if (result.isError()) {
                return Optional.empty();
            }
            if (result.hint().forbidsStoring()) {
                notStored = Counter.UNCACHEABLE_SERVER_HINT;
                return Optional.empty();
            }
            Instant now = clock.instant();
            // never kept longer than the server allows
            Duration ttl = result.maxAge() != null && result.maxAge().compareTo(rule.ttl()) < 0 ? result.maxAge()
                    : rule.ttl();
            stored = new CacheEntry(key, result.json(), "", took, dependsOn(), now, now.plus(ttl), 0,
                    label(tool, arguments));
            return Optional.of(stored);
        }

        private Map<String, String> dependsOn() {
            String version = toolVersions.versions().get(tool);
            return version == null ? Map.of() : Map.of(tool, version);
        }
    }

    /**
     * Builds a {@link CachedTool}; every setting is checked when it is set. What both faces are built
     * with (tool versions, clock, ticker, telemetry) is set as on {@link CachedExecutor.Builder}.
     */
    public static final class Builder extends FaceBuilder<Builder> {
        private final ToolInvoker invoker;
        private final List<ToolCacheRule> rules = new ArrayList<>();
        private ToolCacheRule defaultRule = ToolCacheRule.cache("*", CachePolicy.DEFAULT_TTL, CachePolicy.DEFAULT_MAX_ENTRIES);
        private ToolCallKeyGenerator keyGenerator = ToolCallKeyGenerator.DEFAULT;
        private Duration flightHold = DEFAULT_FLIGHT_HOLD;
        private final List<CacheListener> listeners = new ArrayList<>();
        private Predicate<String> validatorUsable = tool -> true;
        private Duration keepForRevalidation = CachedExecutor.DEFAULT_KEEP_FOR_REVALIDATION;

        private Builder(ToolInvoker invoker, StoreGuard store) {
            super(store);
            this.invoker = Objects.requireNonNull(invoker, "invoker must not be null");
        }

        @Override
        Builder self() {
            return this;
        }

        /** Adds a rule; rules are tried in the order they were added. */
        public Builder rule(ToolCacheRule rule) {
            Objects.requireNonNull(rule, "rule must not be null");
            for (ToolCacheRule existing : rules) {
                if (existing.toolGlob().equals(rule.toolGlob())) {
                    throw new IllegalArgumentException("a rule for '" + rule.toolGlob() + "' was already added");
                }
            }
            rules.add(rule);
            return this;
        }

        /** The rule for tools no rule matches (default: cached, 5 minutes, 100 entries). */
        public Builder defaultRule(boolean enabled, Duration ttl, int maxEntries) {
            this.defaultRule = ToolCacheRule.cache("*", ttl, maxEntries).enabled(enabled);
            return this;
        }

        public Builder keyGenerator(ToolCallKeyGenerator generator) {
            this.keyGenerator = Objects.requireNonNull(generator, "keyGenerator must not be null");
            return this;
        }

        /**
         * How long one process may hold a call's fleet-wide flight before others give up
         * waiting and call the tool themselves (default 60 s); it should outlast the slowest call.
         */
        public Builder flightHold(Duration hold) {
            Objects.requireNonNull(hold, "flightHold must not be null");
            if (hold.isZero() || hold.isNegative()) {
                throw new IllegalArgumentException("flightHold must be positive: " + hold);
            }
            this.flightHold = hold;
            return this;
        }

        public Builder listener(CacheListener listener) {
            listeners.add(Objects.requireNonNull(listener, "listener must not be null"));
            return this;
        }

        /**
         * Whether the validator its rule names may be used for calls of a tool now (default: always);
         * a call whose validator may not is kept for its TTL only.
         */
        public Builder validatorUsable(Predicate<String> usable) {
            this.validatorUsable = Objects.requireNonNull(usable, "validatorUsable must not be null");
            return this;
        }

        /** How long an answer whose rule names a validator is kept for revalidation after it was stored (default 24 h). */
        public Builder keepForRevalidation(Duration keepFor) {
            Objects.requireNonNull(keepFor, "keepForRevalidation must not be null");
            if (keepFor.isNegative()) {
                throw new IllegalArgumentException("keepForRevalidation must not be negative: " + keepFor);
            }
            this.keepForRevalidation = keepFor;
            return this;
        }

        public CachedTool build() {
            return new CachedTool(this);
        }
    }

    /** The tool's name and its arguments in short, e.g. {@code read {"path":"a.txt"}}. */
    private static String label(String tool, Map<String, Object> arguments) {
        String args;
        try {
            args = CanonicalJson.write(arguments, "args");
        } catch (IllegalArgumentException e) {
            args = "";
        }
        return CacheEntry.label(tool + " " + args);
    }
}
