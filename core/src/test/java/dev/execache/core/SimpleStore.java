package dev.execache.core;

import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.CacheStore;
import dev.execache.core.spi.Counter;
import dev.execache.core.spi.GroupBound;
import dev.execache.core.spi.SessionRegistry;
import dev.execache.core.spi.StoreCounters;
import dev.execache.core.spi.WriteGenerations;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * An unbounded map store for the policy's own tests, and for adapters' tests where the store is
 * not what is under test (the real stores live in adapter modules, which adapters must not
 * import). It keeps group bounds, the simplest way: the eldest by insertion or use of the group goes.
 */
public final class SimpleStore implements CacheStore {
    private final StoreCounters figures = new Counters();
    private final WriteGenerations writes = WriteGenerations.inProcess(this, this);
    private final SessionRegistry sessions;
    private final Clock clock;
    private final LinkedHashMap<String, CacheEntry> entries = new LinkedHashMap<>(16, 0.75f, true);
    private final Map<String, String> groupOf = new HashMap<>();
    private final Map<Counter, Long> counters = new EnumMap<>(Counter.class);
    private final Map<String, Map<Counter, Long>> toolCounters = new TreeMap<>();
    private final Map<String, Map<String, String>> versions = new HashMap<>();

    private volatile Runnable onGet = () -> { };

    public SimpleStore(Clock clock) {
        this.clock = clock;
        this.sessions = SessionRegistry.inProcess(clock, 1024);
    }

    /** Runs {@code action} on every {@link #get}, as if the lookup took time (advance a ticker in it). */
    void onGet(Runnable action) {
        this.onGet = action;
    }

    /** Swaps the value under {@code key} for another, keeping the checksum, as damage in storage would. */
    synchronized void damage(String key, String newValue) {
        CacheEntry entry = entries.get(key);
        entries.put(key, new CacheEntry(key, newValue, entry.console(), entry.executionTime(), entry.toolVersions(),
                entry.createdAt(), entry.expiresAt(), entry.hits(), entry.label(), entry.checksum()));
    }

    @Override
    public synchronized Optional<CacheEntry> get(String key) {
        onGet.run();
        Optional<CacheEntry> found = peek(key).map(entry -> entry.withHits(entry.hits() + 1));
        found.ifPresent(entry -> entries.put(key, entry));
        return found;
    }

    @Override
    public synchronized Optional<CacheEntry> peek(String key) {
        CacheEntry entry = entries.get(key);
        return Optional.ofNullable(entry).filter(found -> !found.isExpiredAt(clock.instant()));
    }

    @Override
    public synchronized List<CacheEntry> entries() {
        return entries.values().stream().filter(entry -> !entry.isExpiredAt(clock.instant())).toList();
    }

    @Override
    public synchronized void put(CacheEntry entry) {
        entries.remove(entry.key());
        entries.put(entry.key(), entry);
    }

    @Override
    public synchronized List<String> put(CacheEntry entry, GroupBound bound) {
        put(entry);
        groupOf.put(entry.key(), bound.group());
        List<String> members = entries.keySet().stream().filter(key -> bound.group().equals(groupOf.get(key))).toList();
        List<String> evicted = new ArrayList<>(members.subList(0, Math.max(0, members.size() - bound.maxEntries())));
        evicted.forEach(this::remove);
        counters.merge(Counter.EVICTIONS, (long) evicted.size(), Long::sum);
        return evicted;
    }

    @Override
    public synchronized boolean remove(String key) {
        groupOf.remove(key);
        return entries.remove(key) != null;
    }

    @Override
    public synchronized int removeByTool(String tool) {
        List<String> keys = entries.values().stream().filter(e -> e.toolVersions().containsKey(tool)).map(CacheEntry::key).toList();
        keys.forEach(this::remove);
        return keys.size();
    }

    @Override
    public synchronized int removeByTool(String tool, String version) {
        List<String> keys = entries.values().stream().filter(e -> version.equals(e.toolVersions().get(tool)))
                .map(CacheEntry::key).toList();
        keys.forEach(this::remove);
        return keys.size();
    }

    @Override
    public synchronized int removeByPattern(Glob glob) {
        List<String> keys = entries.keySet().stream().filter(glob::matches).toList();
        keys.forEach(this::remove);
        return keys.size();
    }

    @Override
    public synchronized void clear() {
        entries.clear();
        groupOf.clear();
    }

    @Override public synchronized int size() { return entries.size(); }

    synchronized String onlyKey() {
        if (entries.size() != 1) {
            throw new AssertionError("expected one entry, found " + entries.keySet());
        }
        return entries.keySet().iterator().next();
    }
    @Override public synchronized long estimatedBytes() { return 0; }
    @Override public synchronized int purgeExpired() { return 0; }

    @Override
    public StoreCounters counters() {
        return figures;
    }

    @Override
    public WriteGenerations writeGenerations() {
        return writes;
    }

    @Override
    public SessionRegistry sessions() {
        return sessions;
    }





    @Override public synchronized Map<String, String> lastSeenVersions(String scope) {
        return Map.copyOf(versions.getOrDefault(scope, Map.of()));
    }
    @Override public synchronized void recordVersions(String scope, Map<String, String> newVersions) {
        versions.computeIfAbsent(scope, any -> new HashMap<>()).putAll(newVersions);
        recorded.add(Map.copyOf(newVersions));
    }

    /** What each {@link #recordVersions} was given, in order. */
    synchronized List<Map<String, String>> recorded() {
        return List.copyOf(recorded);
    }

    private final List<Map<String, String>> recorded = new ArrayList<>();

    private Instant countingSince;
    private final Map<String, Map<Counter, Long>> agentCounters = new TreeMap<>();


    /** The figures kept beside the entries; see {@link StoreCounters}. */
    private final class Counters implements StoreCounters {
        @Override
        public void increment(String tool, String agent, Map<Counter, Long> deltas) {
            synchronized (SimpleStore.this) {
                deltas.forEach((counter, delta) -> counters.merge(counter, delta, Long::sum));
                if (tool != null) {
                    Map<Counter, Long> own = toolCounters.computeIfAbsent(tool, name -> new EnumMap<>(Counter.class));
                    deltas.forEach((counter, delta) -> own.merge(counter, delta, Long::sum));
                }
                if (agent != null) {
                    String counted = agentCounters.containsKey(agent) || agentCounters.size() < MAX_AGENTS
                            + (agentCounters.containsKey(OTHER_AGENT) ? 1 : 0) ? agent : OTHER_AGENT;
                    Map<Counter, Long> own = agentCounters.computeIfAbsent(counted, name -> new EnumMap<>(Counter.class));
                    deltas.forEach((counter, delta) -> own.merge(counter, delta, Long::sum));
                }
            }
        }

        @Override
        public Map<String, Map<Counter, Long>> perAgent() {
            synchronized (SimpleStore.this) {
                Map<String, Map<Counter, Long>> copy = new TreeMap<>();
                agentCounters.forEach((agent, counted) -> copy.put(agent, new EnumMap<>(counted)));
                return copy;
            }
        }

        @Override public Map<Counter, Long> totals() {
            synchronized (SimpleStore.this) {     return new EnumMap<>(counters);
            }
        }

        @Override
        public Map<String, Map<Counter, Long>> perTool() {
            synchronized (SimpleStore.this) {
                Map<String, Map<Counter, Long>> copy = new TreeMap<>();
                toolCounters.forEach((tool, counted) -> copy.put(tool, new EnumMap<>(counted)));
                return copy;
            }
        }

        @Override
        public void zero() {
            synchronized (SimpleStore.this) {
                counters.clear();
                toolCounters.clear();
                agentCounters.clear();
                countingSince = clock.instant();
            }
        }

        @Override public Optional<Instant> countingSince() {
            synchronized (SimpleStore.this) {     return Optional.ofNullable(countingSince);
            }
        }
    }
}
