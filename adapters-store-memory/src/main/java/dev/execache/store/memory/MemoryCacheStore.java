package dev.execache.store.memory;

import dev.execache.core.Glob;
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
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * An in-process LRU {@link CacheStore} under one lock: the entries by key, each in a slot that
 * is also a node of the recency list (least recently used first). One lookup finds an entry and
 * its place, so a hit costs a single hash look-up; {@link #peek} reads without moving it. Entries live as long as the process.
 *
 * <p>Bounded twice: at most {@code maxEntries} entries and at most {@code maxBytes} bytes
 * (estimated), so a few huge results cannot take the heap. One more evicts the least recently
 * used; an entry larger than the whole byte bound is not kept.
 */
public final class MemoryCacheStore implements CacheStore {
    private final StoreCounters figures = new Counters();
    private final WriteGenerations writes = WriteGenerations.inProcess(this, this);
    /** More than one process's HTTP service keeps open: a bound, not a limit anyone meets. */
    private static final int MAX_SESSIONS = 64 * 1024;
    private final SessionRegistry sessions;
    public static final int DEFAULT_MAX_ENTRIES = 100;
    /** 64 MiB: well under the JVM's default heap on any machine execache runs on. */
    public static final long DEFAULT_MAX_BYTES = 64L * 1024 * 1024;

    private final int maxEntries;
    private final long maxBytes;
    private final Clock clock;
    private final Map<String, Slot> entries = new HashMap<>();
    /** The ends of the recency list: the least and the most recently used. */
    private Slot oldest;
    private Slot newest;
    private final Map<Counter, AtomicLong> counters = new EnumMap<>(Counter.class);
    private final Map<String, Map<Counter, AtomicLong>> toolCounters = new ConcurrentHashMap<>();
    private final Map<String, Map<Counter, AtomicLong>> agentCounters = new ConcurrentHashMap<>();
    /** The group of each entry that joined one, and how many entries each group has. */
    private final Map<String, String> groupOf = new HashMap<>();
    private final Map<String, Integer> groupSizes = new HashMap<>();
    private final Map<String, Map<String, String>> lastSeenVersions = new ConcurrentHashMap<>();
    /** Per server, see {@link WriteGenerations}: in this process only, as the store is. */
    private long bytes;
    private volatile Instant countingSince;

    public MemoryCacheStore(int maxEntries, Clock clock) {
        this(maxEntries, DEFAULT_MAX_BYTES, clock);
    }

    public MemoryCacheStore(int maxEntries, long maxBytes, Clock clock) {
        if (maxEntries < 1) {
            throw new IllegalArgumentException("maxEntries must be at least 1: " + maxEntries);
        }
        if (maxBytes < 1) {
            throw new IllegalArgumentException("maxBytes must be at least 1: " + maxBytes);
        }
        this.maxEntries = maxEntries;
        this.maxBytes = maxBytes;
        this.clock = Objects.requireNonNull(clock, "clock must not be null");
        this.sessions = SessionRegistry.inProcess(clock, MAX_SESSIONS);
        for (Counter counter : Counter.values()) {
            counters.put(counter, new AtomicLong());
        }
        this.countingSince = clock.instant();
    }

    public MemoryCacheStore() {
        this(DEFAULT_MAX_ENTRIES, Clock.systemUTC());
    }

    @Override
    public synchronized Optional<CacheEntry> get(String key) {
        Slot slot = entries.get(key);
        if (slot == null || expire(slot.entry)) {
            return Optional.empty();
        }
        CacheEntry hit = slot.entry.withHits(slot.entry.hits() + 1);
        slot.entry = hit;
        if (slot != newest) {
            unlink(slot);
            linkNewest(slot);
        }
        return Optional.of(hit);
    }

    @Override
    public synchronized Optional<CacheEntry> peek(String key) {
        Slot slot = entries.get(key);
        if (slot == null || expire(slot.entry)) {
            return Optional.empty();
        }
        CacheEntry entry = slot.entry;
        return Optional.of(entry);
    }

    @Override
    public synchronized List<CacheEntry> entries() {
        Instant now = clock.instant();
        return entries.values().stream().map(slot -> slot.entry).filter(entry -> !entry.isExpiredAt(now)).toList();
    }

    @Override
    public synchronized void put(CacheEntry entry) {
        if (tooLarge(entry)) {
            return;
        }
        insert(entry);
        evictPastBound();
    }

    @Override
    public synchronized List<String> put(CacheEntry entry, GroupBound bound) {
        if (tooLarge(entry)) {
            return List.of();
        }
        insert(entry);
        groupOf.put(entry.key(), bound.group());
        int size = groupSizes.merge(bound.group(), 1, Integer::sum);
        List<String> evicted = new ArrayList<>();
        Slot slot = oldest;
        while (size > bound.maxEntries()) {
            // taken before the drop, which unlinks the slot
            Slot newer = slot.newer;
            String key = slot.entry.key();
            if (bound.group().equals(groupOf.get(key))) {
                count(drop(key));
                evicted.add(key);
                size--;
            }
            slot = newer;
        }
        evictPastBound();
        return evicted;
    }

    /** An entry larger than the whole byte bound is not kept (and replaces nothing): counted as evicted. */
    private boolean tooLarge(CacheEntry entry) {
        if (entry.estimatedBytes() <= maxBytes) {
            return false;
        }
        drop(entry.key());
        counters.get(Counter.EVICTIONS).incrementAndGet();
        return true;
    }

    private void insert(CacheEntry entry) {
        drop(entry.key());
        Slot slot = new Slot(entry);
        entries.put(entry.key(), slot);
        linkNewest(slot);
        bytes += entry.estimatedBytes();
    }

    private void evictPastBound() {
        while (entries.size() > maxEntries || bytes > maxBytes) {
            count(drop(oldest.entry.key()));
        }
    }

    private void count(CacheEntry evicted) {
        counters.get(evicted.isExpiredAt(clock.instant()) ? Counter.EXPIRATIONS : Counter.EVICTIONS).incrementAndGet();
    }

    /** Takes an entry out of every index and the recency list; returns it, or null when there was none. */
    private CacheEntry drop(String key) {
        Slot removed = entries.remove(key);
        String group = groupOf.remove(key);
        if (group != null) {
            groupSizes.computeIfPresent(group, (name, size) -> size == 1 ? null : size - 1);
        }
        if (removed == null) {
            return null;
        }
        unlink(removed);
        bytes -= removed.entry.estimatedBytes();
        return removed.entry;
    }

    private void linkNewest(Slot slot) {
        slot.older = newest;
        slot.newer = null;
        if (newest == null) {
            oldest = slot;
        } else {
            newest.newer = slot;
        }
        newest = slot;
    }

    private void unlink(Slot slot) {
        if (slot.older == null) {
            oldest = slot.newer;
        } else {
            slot.older.newer = slot.newer;
        }
        if (slot.newer == null) {
            newest = slot.older;
        } else {
            slot.newer.older = slot.older;
        }
        slot.older = null;
        slot.newer = null;
    }

    @Override
    public synchronized boolean remove(String key) {
        return drop(key) != null;
    }

    @Override
    public synchronized int removeByTool(String tool) {
        return removeIf(entry -> entry.toolVersions().containsKey(tool));
    }

    @Override
    public synchronized int removeByTool(String tool, String version) {
        return removeIf(entry -> version.equals(entry.toolVersions().get(tool)));
    }

    @Override
    public synchronized int removeByPattern(Glob glob) {
        return removeIf(entry -> glob.matches(entry.key()));
    }

    @Override
    public synchronized void clear() {
        entries.clear();
        oldest = null;
        newest = null;
        groupOf.clear();
        groupSizes.clear();
        bytes = 0;
    }

    @Override
    public synchronized int size() {
        purgeExpired();
        return entries.size();
    }

    @Override
    public synchronized long estimatedBytes() {
        return bytes;
    }

    @Override
    public synchronized int purgeExpired() {
        var now = clock.instant();
        int purged = removeIf(entry -> entry.isExpiredAt(now));
        counters.get(Counter.EXPIRATIONS).addAndGet(purged);
        return purged;
    }

    @Override
    public WriteGenerations writeGenerations() {
        return writes;
    }

    @Override
    public SessionRegistry sessions() {
        return sessions;
    }

    @Override
    public StoreCounters counters() {
        return figures;
    }





    private static Map<Counter, Long> snapshot(Map<Counter, AtomicLong> counted) {
        Map<Counter, Long> snapshot = new EnumMap<>(Counter.class);
        counted.forEach((counter, value) -> snapshot.put(counter, value.get()));
        return snapshot;
    }



    @Override
    public Map<String, String> lastSeenVersions(String scope) {
        return Map.copyOf(new TreeMap<>(lastSeenVersions.getOrDefault(scope, Map.of())));
    }

    @Override
    public void recordVersions(String scope, Map<String, String> versions) {
        lastSeenVersions.computeIfAbsent(scope, any -> new ConcurrentHashMap<>()).putAll(versions);
    }

    private boolean expire(CacheEntry entry) {
        if (!entry.isExpiredAt(clock.instant())) {
            return false;
        }
        drop(entry.key());
        counters.get(Counter.EXPIRATIONS).incrementAndGet();
        return true;
    }

    private int removeIf(Predicate<CacheEntry> condition) {
        List<String> matching = entries.values().stream().map(slot -> slot.entry).filter(condition).map(CacheEntry::key)
                .toList();
        matching.forEach(this::drop);
        return matching.size();
    }


    /** An entry and its place in the recency list. */
    private static final class Slot {
        private CacheEntry entry;
        private Slot older;
        private Slot newer;

        private Slot(CacheEntry entry) {
            this.entry = entry;
        }
    }

    /** The figures kept beside the entries; see {@link StoreCounters}. */
    private final class Counters implements StoreCounters {
        @Override
        public void increment(String tool, String agent, Map<Counter, Long> deltas) {
            deltas.forEach((counter, delta) -> counters.get(counter).addAndGet(delta));
            if (tool != null) {
                Map<Counter, AtomicLong> own = toolCounters.computeIfAbsent(tool, name -> newCounters());
                deltas.forEach((counter, delta) -> own.get(counter).addAndGet(delta));
            }
            if (agent != null) {
                Map<Counter, AtomicLong> own = agentCounters.get(agent);
                if (own == null) {
                    own = countersOfNewAgent(agent);
                }
                Map<Counter, AtomicLong> counted = own;
                deltas.forEach((counter, delta) -> counted.get(counter).addAndGet(delta));
            }
        }

        /** Under the store's lock, so that two new agents at once cannot both take the last place. */
        private Map<Counter, AtomicLong> countersOfNewAgent(String agent) {
            synchronized (MemoryCacheStore.this) {
                return agentCounters.computeIfAbsent(StoreCounters.countedAs(agentCounters.keySet(), agent),
                        name -> newCounters());
            }
        }

        private static Map<Counter, AtomicLong> newCounters() {
            Map<Counter, AtomicLong> created = new EnumMap<>(Counter.class);
            for (Counter counter : Counter.values()) {
                created.put(counter, new AtomicLong());
            }
            return created;
        }

        @Override
        public Map<String, Map<Counter, Long>> perAgent() {
            Map<String, Map<Counter, Long>> snapshot = new TreeMap<>();
            agentCounters.forEach((agent, counted) -> snapshot.put(agent, snapshot(counted)));
            return snapshot;
        }

        @Override
        public Map<Counter, Long> totals() {
            return snapshot(counters);
        }

        @Override
        public Map<String, Map<Counter, Long>> perTool() {
            Map<String, Map<Counter, Long>> snapshot = new TreeMap<>();
            toolCounters.forEach((tool, counted) -> snapshot.put(tool, snapshot(counted)));
            return snapshot;
        }

        @Override
        public void zero() {
            synchronized (MemoryCacheStore.this) {
                counters.values().forEach(counter -> counter.set(0));
                toolCounters.clear();
                agentCounters.clear();
                countingSince = clock.instant();
            }
        }

        @Override
        public Optional<Instant> countingSince() {
            return Optional.of(countingSince);
        }
    }
}
