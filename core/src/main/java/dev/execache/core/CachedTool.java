package dev.execache.core;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.LongAdder;

/**
 * Caches agent tool calls by the same policy as code: read-only tools are cached, mutating
 * ones never (unless a rule names them exactly), failures never. Rules are chosen by glob
 * on the tool name, first match wins; tools no rule matches get the default rule.
 */
public final class CachedTool {
    /** Tools that change the world; never cached unless a rule names one exactly. */
    public static final List<String> MUTATING_TOOLS =
            List.of("write*", "edit*", "bash", "*create*", "*update*", "*delete*", "*deploy*");

    private final ToolInvoker invoker;
    private final StoreGuard store;
    /** The rules in order, each with its glob compiled once. */
    private final Map<ToolCacheRule, Glob> rules = new LinkedHashMap<>();
    /** Which rule applies to a tool never changes after building: decided once per tool name. */
    private final Map<String, Optional<ToolCacheRule>> ruleByTool = new ConcurrentHashMap<>();
    private final ToolCacheRule defaultRule;
    private final ToolCallKeyGenerator keyGenerator;
    private final ToolVersionSource toolVersions;
    private final Clock clock;
    private final List<CacheListener> listeners;
    private final List<Glob> mutating = MUTATING_TOOLS.stream().map(Glob::of).toList();
    private final Map<ToolCacheRule, LinkedHashMap<String, String>> keysByRule = new IdentityHashMap<>();
    private final Map<String, LongAdder[]> statsByTool = new ConcurrentHashMap<>();

    private CachedTool(Builder builder) {
        this.invoker = builder.invoker;
        this.store = new StoreGuard(builder.store);
        builder.rules.forEach(rule -> rules.put(rule, Glob.of(rule.toolGlob())));
        this.defaultRule = builder.defaultRule;
        this.keyGenerator = builder.keyGenerator;
        this.toolVersions = builder.toolVersions;
        this.clock = builder.clock;
        this.listeners = new CopyOnWriteArrayList<>(builder.listeners);
        toolVersions.addListener((tool, version) -> invalidate(tool));
    }

    public static Builder builder(ToolInvoker invoker, CacheStore store) {
        return new Builder(invoker, store);
    }

    /** Calls the tool, or returns its cached answer. Exceptions of the tool pass through, uncached. */
    public ToolResult call(String tool, Map<String, ?> args) {
        Optional<ToolCacheRule> rule = ruleFor(tool);
        Map<String, Object> arguments = args == null ? Map.of() : Map.copyOf(args);
        if (rule.isEmpty()) {
            return invoker.invoke(tool, arguments);
        }
        String key = keyFor(tool, arguments);
        Optional<CacheEntry> hit = store.call("read an entry", () -> store.store().get(key), Optional.empty());
        if (hit.isPresent()) {
            count(tool, 0);
            touch(rule.get(), key, tool);
            listeners.forEach(listener -> listener.onHit(tool, key));
            return ToolResult.ok(hit.get().value());
        }
        count(tool, 1);
        listeners.forEach(listener -> listener.onMiss(tool, key));
        long start = System.nanoTime();
        ToolResult result = invoker.invoke(tool, arguments);
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        if (!result.isError()) {
            Instant now = clock.instant();
            String version = toolVersions.versions().get(tool);
            Map<String, String> dependsOn = version == null ? Map.of() : Map.of(tool, version);
            CacheEntry entry = new CacheEntry(key, result.json(), "", took, dependsOn, now, now.plus(rule.get().ttl()), 0,
                    label(tool, arguments));
            if (store.run("store a result", () -> store.store().put(entry))) {
                touch(rule.get(), key, tool);
            }
        }
        return result;
    }

    /** Whether calls of {@code tool} are cached. */
    public boolean isCached(String tool) {
        return ruleFor(tool).isPresent();
    }

    /** Removes the cached calls of every tool matching {@code toolGlob}; returns how many. */
    public int clear(String toolGlob) {
        Glob.of(toolGlob);
        return store.call("clear entries", () -> store.store().removeByPattern(keyGenerator.pattern(toolGlob)), 0);
    }

    /** What the cache holds for this call, without counting a hit. */
    public Optional<ToolCallInfo> inspect(String tool, Map<String, ?> args) {
        String key = keyFor(tool, args == null ? Map.of() : Map.copyOf(args));
        Instant now = clock.instant();
        return store.call("read an entry", () -> store.store().peek(key), Optional.<CacheEntry>empty())
                .map(entry -> new ToolCallInfo(key, Duration.between(entry.createdAt(), now),
                        Duration.between(now, entry.expiresAt()), entry.hits(), entry.toolVersions()));
    }

    /** Hits and misses per tool, counted in this process. */
    public Map<String, ToolStats> stats() {
        Map<String, ToolStats> stats = new TreeMap<>();
        statsByTool.forEach((tool, counts) -> stats.put(tool, new ToolStats(counts[0].sum(), counts[1].sum())));
        return stats;
    }

    public void addListener(CacheListener listener) {
        listeners.add(Objects.requireNonNull(listener, "listener must not be null"));
    }

    private Optional<ToolCacheRule> ruleFor(String tool) {
        if (tool == null || tool.isBlank()) {
            throw new IllegalArgumentException("tool name must not be blank");
        }
        return ruleByTool.computeIfAbsent(tool, this::decideRule);
    }

    private Optional<ToolCacheRule> decideRule(String tool) {
        boolean isMutating = mutating.stream().anyMatch(glob -> glob.matches(tool));
        for (Map.Entry<ToolCacheRule, Glob> entry : rules.entrySet()) {
            ToolCacheRule rule = entry.getKey();
            if (entry.getValue().matches(tool)) {
                boolean allowed = rule.enabled() && (!isMutating || rule.namesExactly(tool));
                return allowed ? Optional.of(rule) : Optional.empty();
            }
        }
        return defaultRule.enabled() && !isMutating ? Optional.of(defaultRule) : Optional.empty();
    }

    private String keyFor(String tool, Map<String, Object> args) {
        return keyGenerator.key(tool, CanonicalJson.write(args, tool + ".args"), toolVersions.versions().get(tool));
    }

    private void count(String tool, int index) {
        statsByTool.computeIfAbsent(tool, name -> new LongAdder[] {new LongAdder(), new LongAdder()})[index].increment();
    }

    /** Keeps each rule's own bound: the least recently used call of a rule past its bound is removed. */
    private void touch(ToolCacheRule rule, String key, String tool) {
        List<Map.Entry<String, String>> evicted = new ArrayList<>();
        synchronized (keysByRule) {
            LinkedHashMap<String, String> keys = keysByRule.computeIfAbsent(rule, r -> new LinkedHashMap<>(16, 0.75f, true));
            keys.put(key, tool);
            Iterator<Map.Entry<String, String>> eldestFirst = keys.entrySet().iterator();
            while (keys.size() > rule.maxEntries()) {
                Map.Entry<String, String> eldest = eldestFirst.next();
                evicted.add(Map.entry(eldest.getKey(), eldest.getValue()));
                eldestFirst.remove();
            }
        }
        for (Map.Entry<String, String> eldest : evicted) {
            store.run("evict an entry", () -> store.store().remove(eldest.getKey()));
            listeners.forEach(listener -> listener.onEviction(eldest.getValue(), eldest.getKey()));
        }
    }

    private void invalidate(String tool) {
        int removed = store.call("remove entries of a tool", () -> store.store().removeByTool(tool), 0);
        if (removed > 0) {
            store.run("count invalidations", () -> store.store().increment(Counter.INVALIDATIONS, removed));
        }
        listeners.forEach(listener -> listener.onInvalidation(tool, removed));
    }

    /** Builds a {@link CachedTool}; every setting is checked when it is set. */
    public static final class Builder {
        private final ToolInvoker invoker;
        private final CacheStore store;
        private final List<ToolCacheRule> rules = new ArrayList<>();
        private ToolCacheRule defaultRule = ToolCacheRule.cache("*", CachePolicy.DEFAULT_TTL, CachePolicy.DEFAULT_MAX_ENTRIES);
        private ToolCallKeyGenerator keyGenerator = ToolCallKeyGenerator.DEFAULT;
        private ToolVersionSource toolVersions = Map::of;
        private Clock clock = Clock.systemUTC();
        private final List<CacheListener> listeners = new ArrayList<>();

        private Builder(ToolInvoker invoker, CacheStore store) {
            this.invoker = Objects.requireNonNull(invoker, "invoker must not be null");
            this.store = Objects.requireNonNull(store, "store must not be null");
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
            this.defaultRule = new ToolCacheRule("*", enabled, ttl, maxEntries);
            return this;
        }

        public Builder keyGenerator(ToolCallKeyGenerator generator) {
            this.keyGenerator = Objects.requireNonNull(generator, "keyGenerator must not be null");
            return this;
        }

        /** Where tool versions come from; a change removes that tool's cached calls. */
        public Builder toolVersions(ToolVersionSource source) {
            this.toolVersions = Objects.requireNonNull(source, "toolVersions must not be null");
            return this;
        }

        public Builder clock(Clock newClock) {
            this.clock = Objects.requireNonNull(newClock, "clock must not be null");
            return this;
        }

        public Builder listener(CacheListener listener) {
            listeners.add(Objects.requireNonNull(listener, "listener must not be null"));
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
