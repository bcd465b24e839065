package dev.execache.store.redis;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.execache.core.Glob;
import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.CacheStore;
import dev.execache.core.spi.Counter;
import dev.execache.core.spi.FlightLease;
import dev.execache.core.spi.GroupBound;
import dev.execache.core.spi.SessionRegistry;
import dev.execache.core.spi.StoreCounters;
import dev.execache.core.spi.WriteGenerations;
import dev.execache.store.redis.KeyLayout.Partition;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.redisson.Redisson;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.RedisException;
import org.redisson.client.codec.StringCodec;

/**
 * A {@link CacheStore} in Redis, shared by every process that names the same server and key
 * prefix: entries, the LRU bound, counters and last-seen tool versions are fleet-wide, and
 * {@link #acquireFlight} makes the fleet run one execution at a time per key.
 *
 * <p>The cache is spread over partitions, each in a hash slot of its own, so that a Redis Cluster
 * spreads it over its masters; an entry's partition follows from its key, and each partition
 * holds its share of the bound, evicting its own least recently used (see {@link KeyLayout}).
 * Every change to the entries is one Lua script run atomically by Redis on one partition, and a
 * hit is one round trip ({@link Scripts}); removals and figures reach every partition at once.
 * Redisson's {@code RMapCache} is not used: it expires entries from a
 * client-side task rather than by Redis TTL (entries linger while no client runs), its
 * last-access set can grow past the map, and it can neither read without refreshing recency
 * nor find the entries of a tool without reading them all.
 *
 * <p>Every operation waits at most the configured timeout (its budget) for Redis, counting
 * only time this process could run ({@link Budget}: a loaded machine is not a slow Redis). When
 * Redis does not answer in time or cannot be reached, the operation throws a {@link RedisException}
 * with a one-line message, and a circuit breaker makes every later operation throw at once,
 * until Redis is found answering again (a check in the background, or the late reply): a slow
 * or absent Redis costs a caller one timeout per outage, not one per operation. The same
 * instance works again once the server is back. On a Cluster each partition has its breaker, and
 * a master that fails costs only the calls whose keys are in its partitions ({@link RedisCalls}).
 */
public final class RedisCacheStore implements CacheStore {
    private static final System.Logger LOG = System.getLogger(RedisCacheStore.class.getName());
    private static final ObjectMapper JSON = new ObjectMapper();

    /** See {@link Flights#LEASE}. */
    static final Duration FLIGHT_LEASE = Flights.LEASE;

    private final RedissonClient redisson;
    private final boolean ownsClient;
    private final KeyLayout keys;
    private final int maxEntries;
    private final Clock clock;
    private final String server;
    private final RedisCalls calls;
    private final RedisCounters figures;
    private final WriteGenerations writes = new Writes();
    private final SessionRegistry sessions = new Sessions();
    private final Flights flights;
    private final SigningKeys signingKeys;
    private final ServerChecks checks;
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * Uses a client the caller already has, and leaves it open on {@link #close()}: an
     * application keeps one {@link RedissonClient} for everything. The cache has the default
     * {@linkplain RedisStoreSettings#DEFAULT_PARTITIONS partitions}.
     */
    public RedisCacheStore(RedissonClient redisson, String keyPrefix, int maxEntries, Clock clock) {
        this(redisson, keyPrefix, maxEntries, SigningKeys.none(), clock);
    }

    /** As {@link #RedisCacheStore(RedissonClient, String, int, Clock)}, signing entries with the fleet's keys. */
    public RedisCacheStore(RedissonClient redisson, String keyPrefix, int maxEntries, SigningKeys signingKeys, Clock clock) {
        this(redisson, keyPrefix, maxEntries, signingKeys, RedisStoreSettings.DEFAULT_TIMEOUT, clock);
    }

    /** With its own budget per operation; for tests that check behaviour, not timeouts, on a loaded machine. */
    RedisCacheStore(RedissonClient redisson, String keyPrefix, int maxEntries, SigningKeys signingKeys, Duration timeout,
            Clock clock) {
        this(redisson, false, "Redis", keyPrefix, maxEntries, RedisStoreSettings.DEFAULT_PARTITIONS, timeout, signingKeys,
                clock);
    }

    private RedisCacheStore(RedissonClient redisson, boolean ownsClient, String server, String keyPrefix, int maxEntries,
            int partitions, Duration timeout, SigningKeys signingKeys, Clock clock) {
        this.redisson = Objects.requireNonNull(redisson, "redisson must not be null");
        if (maxEntries < 1) {
            throw new IllegalArgumentException("maxEntries must be at least 1: " + maxEntries);
        }
        this.ownsClient = ownsClient;
        this.keys = KeyLayout.of(keyPrefix, partitions, maxEntries);
        this.maxEntries = maxEntries;
        this.clock = Objects.requireNonNull(clock, "clock must not be null");
        this.server = server;
        this.signingKeys = Objects.requireNonNull(signingKeys, "signingKeys must not be null");
        this.calls = new RedisCalls(redisson, server, timeout, keys, redisson.getConfig().isClusterConfig());
        this.figures = new RedisCounters(calls, keys, clock);
        calls.onRecovered(failed -> figures.increment(Counter.STORE_ERRORS, failed));
        this.flights = new Flights(calls);
        this.checks = new ServerChecks(calls, keys);
    }

    /** Connects with the default prefix, bound and timeout, on the system clock; see {@link #connect(RedisStoreSettings, Clock)}. */
    public static RedisCacheStore connect(String url) {
        return connect(RedisStoreSettings.of(url), Clock.systemUTC());
    }

    /**
     * Connects its own client, shut down on {@link #close()}, and checks that Redis answers.
     *
     * @throws IllegalArgumentException if the URL is malformed
     * @throws IllegalStateException if Redis cannot be used now: it cannot be reached, does not
     *     answer within the timeout, or refuses the credentials; the message says which, names
     *     the server, and never shows the password
     */
    public static RedisCacheStore connect(RedisStoreSettings settings, Clock clock) {
        RedisCacheStore store = create(settings, clock);
        try {
            store.calls.await(store.keys.partition(0), () -> store.calls.check(store.keys.partition(0)));
        } catch (RedisException e) {
            store.close();
            throw new IllegalStateException(e.getMessage(), e);
        }
        store.checks.evictionPolicy();
        store.checks.previousLayout();
        return store;
    }

    /**
     * Connects its own client, shut down on {@link #close()}, without waiting for Redis: the
     * connection is made in the background. A long-running process starts this way, so that a slow or absent Redis at start
     * neither delays it nor keeps it uncached longer than the outage.
     *
     * @throws IllegalArgumentException if the URL is malformed
     */
    public static RedisCacheStore open(RedisStoreSettings settings, Clock clock) {
        RedisCacheStore store = create(settings, clock);
        // Only to make the connection now, in the background, rather than on the first call; a
        // failure here is left for the first call to meet, which says what went wrong.
        store.calls.check(store.keys.partition(0));
        store.checks.evictionPolicy();
        store.checks.previousLayout();
        return store;
    }

    private static RedisCacheStore create(RedisStoreSettings settings, Clock clock) {
        Objects.requireNonNull(clock, "clock must not be null");
        RedisUrl url = RedisUrl.parse(settings.url());
        RedissonClient client = Redisson.create(RedissonConfig.of(url, settings.timeout()));
        settings.unsignedWarning().ifPresent(warning -> LOG.log(System.Logger.Level.WARNING, warning));
        return new RedisCacheStore(client, true, url.toString(), settings.keyPrefix(), settings.maxEntries(),
                settings.partitions(), settings.timeout(), settings.signingKeys(), clock);
    }

    /**
     * Why {@link #size()} and {@link #estimatedBytes()} are only estimates, if they are: Redis's
     * {@code maxmemory-policy} may evict execache's indexes (an {@code allkeys-*} policy), so the
     * entries they count may differ from those Redis holds (never more: each count is made again
     * from the entries Redis holds). Empty under {@code noeviction} and the {@code volatile-*}
     * policies, which keep them, and for a Redis that does not tell its policy. Asks Redis, within the budget.
     */
    public Optional<String> entriesEstimatedBecause() {
        return checks.entriesEstimatedBecause();
    }

    /** What opening checks of Redis: for tests that run a check again. */
    ServerChecks checks() {
        return checks;
    }

    /** The layout of this store's keys: for tests that look at what it wrote. */
    KeyLayout layout() {
        return keys;
    }

    @Override
    public Optional<CacheEntry> get(String key) {
        return readOrMiss(key, true);
    }

    @Override
    public Optional<CacheEntry> peek(String key) {
        return readOrMiss(key, false);
    }

    /** A read of a partition that does not answer, while others do, is a miss (see {@link RedisCalls#absorbs}). */
    private Optional<CacheEntry> readOrMiss(String key, boolean touch) {
        Partition partition = keys.partitionFor(key);
        try {
            return read(partition, key, touch);
        } catch (RedisStoreException e) {
            if (calls.absorbs(partition, e)) {
                return Optional.empty();
            }
            throw e;
        }
    }

    private Optional<CacheEntry> read(Partition partition, String key, boolean touch) {
        List<Object> fields = calls.await(partition, () -> calls.script().evalAsync(RScript.Mode.READ_WRITE, Scripts.GET,
                RScript.ReturnType.LIST, partition.getKeys(key), key, Long.toString(clock.millis()), touch ? "1" : "0"));
        if (!EntryFields.isEntry(fields)) {
            if (!fields.isEmpty()) {
                calls.run(partition, clock.millis(), Scripts.EXPIRE, RScript.ReturnType.LONG, key);
            }
            return Optional.empty();
        }
        String signature = EntryFields.signature(fields);
        if (!signingKeys.isEmpty() && !signingKeys.verifies(EntryFields.signed(key, fields), signature)) {
            reject(partition, key, signature);
            return Optional.empty();
        }
        return Optional.of(EntryFields.entry(key, fields));
    }

    /**
     * Removes an entry no fleet key signed, unless it was replaced meanwhile, and counts it as
     * damaged: it is never served. Logged once: removed, it is not read again.
     */
    private void reject(Partition partition, String key, String signature) {
        long removed = calls.<Long>run(partition, clock.millis(), Scripts.REJECT, RScript.ReturnType.LONG, key,
                signature == null ? "" : signature);
        if (removed > 0) {
            LOG.log(System.Logger.Level.WARNING, "cache entry " + key + " in Redis at " + server
                    + (signature == null ? " has no signature" : " has a signature none of the fleet's keys made")
                    + ": removed it, not served (counted as damaged)");
        }
    }

    @Override
    public void put(CacheEntry entry) {
        put(entry, null);
    }

    @Override
    public List<String> put(CacheEntry entry, GroupBound bound) {
        return put(entry, bound, "").orElseThrow();
    }

    /**
     * Puts the entry in its partition, which holds its share of the bound and of the group's.
     * A put to a partition that does not answer, while others do, is dropped, as if evicted at once.
     *
     * @param seen the write generations as JSON, '' for none; empty if one moved
     */
    private Optional<List<String>> put(CacheEntry entry, GroupBound bound, String seen) {
        Partition partition = keys.partitionFor(entry.key());
        long ttl = Math.max(1, entry.expiresAt().toEpochMilli() - clock.millis());
        Object[] args = EntryFields.putArguments(entry, ttl, keys.share(maxEntries, partition.index(), 0),
                bound == null ? "" : bound.group(),
                bound == null ? 0 : keys.share(bound.maxEntries(), partition.index(), bound.group().hashCode()),
                signingKeys.isEmpty() ? "" : signingKeys.sign(EntryFields.signed(entry)), seen);
        List<Object> evicted;
        try {
            evicted = calls.run(partition, clock.millis(), Scripts.PUT, RScript.ReturnType.LIST, args);
        } catch (RedisStoreException e) {
            if (calls.absorbs(partition, e)) {
                return Optional.of(List.of());
            }
            throw e;
        }
        return evicted == null ? Optional.empty() : Optional.of(evicted.stream().map(String::valueOf).toList());
    }

    /** Reads the keys the recency indexes name, each as {@link #peek}; the bound keeps that list short. */
    @Override
    public List<CacheEntry> entries() {
        List<CacheEntry> live = new ArrayList<>();
        List<Partition> all = keys.all();
        List<Collection<String>> indexed = indexedKeys();
        for (int i = 0; i < all.size(); i++) {
            if (indexed.get(i) != null) {
                for (String key : indexed.get(i)) {
                    read(all.get(i), key, false).ifPresent(live::add);
                }
            }
        }
        return live;
    }

    /** Each partition's recency index, in partition order; null for one that does not answer in a partial outage. */
    private List<Collection<String>> indexedKeys() {
        return calls.everywhere(keys.all(), true, partition -> redisson.<String>getScoredSortedSet(partition.lru(),
                StringCodec.INSTANCE).readAllAsync());
    }

    @Override
    public boolean remove(String key) {
        Partition partition = keys.partitionFor(key);
        return calls.<Long>run(partition, clock.millis(), Scripts.REMOVE, RScript.ReturnType.LONG, key) > 0;
    }

    @Override
    public int removeByTool(String tool) {
        return sum(everywhere(Scripts.REMOVE_BY_TOOL, tool));
    }

    @Override
    public int removeByTool(String tool, String version) {
        Objects.requireNonNull(version, "version must not be null");
        return sum(everywhere(Scripts.REMOVE_BY_TOOL, tool, version));
    }

    /** Runs a script on every partition at once; fails if one does not answer, as a removal must. */
    private List<Object> everywhere(String lua, Object... args) {
        long now = clock.millis();
        return calls.everywhere(keys.all(), false, partition -> calls.eval(partition, now, lua, RScript.ReturnType.LONG, args));
    }

    private static int sum(List<Object> replies) {
        return replies.stream().filter(Objects::nonNull).mapToInt(RedisCacheStore::toInt).sum();
    }

    /** Matches the keys in this process with core's {@link Glob}; the bound keeps that list short. */
    @Override
    public int removeByPattern(Glob glob) {
        List<Partition> all = keys.all();
        List<Collection<String>> indexed = calls.everywhere(all, false, partition -> redisson.<String>getScoredSortedSet(
                partition.lru(), StringCodec.INSTANCE).readAllAsync());
        List<Partition> matched = new ArrayList<>();
        Map<Integer, Object[]> matching = new HashMap<>();
        for (int i = 0; i < all.size(); i++) {
            Object[] keysThere = indexed.get(i).stream().filter(glob::matches).toArray();
            if (keysThere.length > 0) {
                matched.add(all.get(i));
                matching.put(all.get(i).index(), keysThere);
            }
        }
        long now = clock.millis();
        return sum(calls.<Object>everywhere(matched, false, partition -> calls.eval(partition, now, Scripts.REMOVE,
                RScript.ReturnType.LONG, matching.get(partition.index()))));
    }

    @Override
    public void clear() {
        everywhere(Scripts.CLEAR);
    }

    /** The live entries of every partition that answers, each count made from what Redis holds (see {@link Scripts#PURGE}). */
    @Override
    public int size() {
        return purgeEverywhere().stream().mapToInt(purged -> toInt(purged.get(1))).sum();
    }

    @Override
    public int purgeExpired() {
        return purgeEverywhere().stream().mapToInt(purged -> toInt(purged.get(0))).sum();
    }

    private List<List<Object>> purgeEverywhere() {
        long now = clock.millis();
        return calls.<List<Object>>everywhere(keys.all(), true, partition -> calls.eval(partition, now, Scripts.PURGE,
                RScript.ReturnType.LIST)).stream().filter(Objects::nonNull).toList();
    }

    /** The sum of the partitions' byte counts, none below zero (see {@link Scripts#PURGE}). */
    @Override
    public long estimatedBytes() {
        return calls.everywhere(keys.all(), true, partition -> redisson.getAtomicLong(partition.bytes()).getAsync())
                .stream().filter(Objects::nonNull).mapToLong(bytes -> Math.max(0, bytes)).sum();
    }

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

    /**
     * One key per session in the partition its id falls in; expiry by the store's clock, as for entries, with
     * Redis's own a while later so that a session nobody ends does not stay.
     */
    private final class Sessions implements SessionRegistry {
        @Override
        public void open(String id, String owner, Duration idleLimit) {
            Partition partition = keys.partitionFor(id);
            long expiresAt = clock.millis() + idleLimit.toMillis();
            calls.await(partition, () -> redisson.<String>getBucket(partition.session(id), StringCodec.INSTANCE)
                    .setAsync(expiresAt + " " + owner, kept(idleLimit).toMillis(), TimeUnit.MILLISECONDS));
        }

        @Override
        public Optional<String> use(String id, Duration idleLimit) {
            Partition partition = keys.partitionFor(id);
            long now = clock.millis();
            return Optional.ofNullable(calls.await(partition, () -> calls.script().<String>evalAsync(
                    RScript.Mode.READ_WRITE, Scripts.USE_SESSION, RScript.ReturnType.VALUE,
                    List.of(partition.session(id)), Long.toString(now), Long.toString(now + idleLimit.toMillis()),
                    Long.toString(kept(idleLimit).toMillis()))));
        }

        @Override
        public boolean end(String id) {
            Partition partition = keys.partitionFor(id);
            Long ended = calls.await(partition, () -> calls.script().<Long>evalAsync(RScript.Mode.READ_WRITE,
                    Scripts.END_SESSION, RScript.ReturnType.LONG, List.of(partition.session(id)),
                    Long.toString(clock.millis())));
            return ended != null && ended == 1;
        }

        private static Duration kept(Duration idleLimit) {
            return idleLimit.multipliedBy(2);
        }
    }

    /**
     * A copy of the hash in every partition, so that the check of a put on condition is in the
     * same script as the put ({@link Scripts#PUT}): an advance reaches every partition before it
     * returns, and a put is checked against the copy in its own partition. A generation read from
     * one copy and checked against another can only differ the safe way (nothing stored).
     */
    private final class Writes implements WriteGenerations {
        @Override
        public long current(String server) {
            List<Partition> used = keys.usedPartitions();
            int first = Math.floorMod(server.hashCode(), used.size());
            // any copy will do; one that fails in a partial outage hands on to the next that answers
            for (int i = 0; ; i++) {
                Partition from = used.get((first + i) % used.size());
                if (i > 0 && !calls.answers(from)) {
                    continue;
                }
                try {
                    String generation = calls.await(from, () -> redisson.<String, String>getMap(from.writes(),
                            StringCodec.INSTANCE).getAsync(server));
                    return generation == null ? 0 : Long.parseLong(generation);
                } catch (RedisStoreException e) {
                    if (!calls.absorbs(from, e) || i + 1 >= used.size()) {
                        throw e;
                    }
                }
            }
        }

        @Override
        public void advance(String server) {
            calls.everywhere(keys.all(), false, partition -> calls.script().<Long>evalAsync(RScript.Mode.READ_WRITE,
                    Scripts.ADVANCE_WRITES, RScript.ReturnType.LONG, List.of(partition.writes()), server));
        }

        @Override
        public Optional<List<String>> putIfCurrent(CacheEntry entry, GroupBound bound, Map<String, Long> seen) {
            try {
                return put(entry, bound, seen.isEmpty() ? "" : JSON.writeValueAsString(seen));
            } catch (JsonProcessingException e) {
                throw new IllegalStateException("cannot write write generations " + seen, e);
            }
        }
    }

    /** Kept in partition 0: read and written once per command, not per call. */
    @Override
    public Map<String, String> lastSeenVersions(String scope) {
        Partition home = keys.partition(0);
        return Map.copyOf(calls.await(home, () -> redisson.<String, String>getMap(home.versions(scope), StringCodec.INSTANCE)
                .readAllMapAsync()));
    }

    @Override
    public void recordVersions(String scope, Map<String, String> versions) {
        if (!versions.isEmpty()) {
            Partition home = keys.partition(0);
            calls.await(home, () -> redisson.<String, String>getMap(home.versions(scope), StringCodec.INSTANCE)
                    .putAllAsync(versions));
        }
    }

    /**
     * Takes the fleet-wide flight of {@code key} in its partition (see {@link Flights#acquire});
     * while that partition does not answer and others do, the caller runs on its own.
     */
    @Override
    public FlightLease acquireFlight(String key, Duration maxHold) throws InterruptedException {
        if (maxHold.isNegative() || maxHold.isZero()) {
            throw new IllegalArgumentException("maxHold must be positive: " + maxHold);
        }
        Partition partition = keys.partitionFor(key);
        try {
            return flights.acquire(partition, key, maxHold);
        } catch (RedisStoreException e) {
            if (calls.absorbs(partition, e)) {
                return FlightLease.LOCAL;
            }
            throw e;
        }
    }

    /** Shuts the client down if this store connected it. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            calls.close();
            flights.close();
            if (ownsClient) {
                redisson.shutdown();
            }
        }
    }

    @Override
    public String toString() {
        return "RedisCacheStore[prefix=" + keys.prefix() + ", maxEntries=" + maxEntries + ", partitions="
                + keys.partitions() + " (" + keys.used() + " used)]";
    }

    private static int toInt(Object reply) {
        return Integer.parseInt(String.valueOf(reply));
    }
}
