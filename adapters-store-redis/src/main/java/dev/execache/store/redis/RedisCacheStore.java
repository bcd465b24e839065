package dev.execache.store.redis;

import dev.execache.core.CacheEntry;
import dev.execache.core.CacheStore;
import dev.execache.core.Counter;
import dev.execache.core.FlightLease;
import dev.execache.core.Glob;
import dev.execache.core.GroupBound;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.RedisException;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;
import org.redisson.config.EqualJitterDelay;

/**
 * A {@link CacheStore} in Redis, shared by every process that names the same server and key
 * prefix: entries, the LRU bound, counters and last-seen tool versions are fleet-wide, and
 * {@link #acquireFlight} makes the fleet run one execution at a time per key.
 *
 * <p>Every change to the entries is one Lua script run atomically by Redis, and a hit is one
 * round trip (see {@link KeyLayout} for what is kept where, {@link Scripts} for the scripts).
 * Redisson's {@code RMapCache} is not used: it expires entries from a
 * client-side task rather than by Redis TTL (entries linger while no client runs), its
 * last-access set can grow past the map, and it can neither read without refreshing recency
 * nor find the entries of a tool without reading them all.
 *
 * <p>When Redis cannot be reached, every method throws a {@link RedisException} within about
 * the configured timeout; the same instance works again once the server is back.
 */
public final class RedisCacheStore implements CacheStore {
    private static final System.Logger LOG = System.getLogger(RedisCacheStore.class.getName());

    /** A tool's own counters are the fields {@code tool:<COUNTER>:<tool>} of the counters hash. */
    private static final String TOOL_COUNTER_PREFIX = "tool:";

    private final RedissonClient redisson;
    private final boolean ownsClient;
    private final KeyLayout keys;
    private final List<Object> scriptKeys;
    private final int maxEntries;
    private final Clock clock;
    private final RScript script;
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * Uses a client the caller already has, and leaves it open on {@link #close()}: an
     * application keeps one {@link RedissonClient} for everything.
     */
    public RedisCacheStore(RedissonClient redisson, String keyPrefix, int maxEntries, Clock clock) {
        this(redisson, false, keyPrefix, maxEntries, clock);
    }

    private RedisCacheStore(RedissonClient redisson, boolean ownsClient, String keyPrefix, int maxEntries, Clock clock) {
        this.redisson = Objects.requireNonNull(redisson, "redisson must not be null");
        if (keyPrefix == null || keyPrefix.isEmpty()) {
            throw new IllegalArgumentException("keyPrefix must not be empty");
        }
        if (maxEntries < 1) {
            throw new IllegalArgumentException("maxEntries must be at least 1: " + maxEntries);
        }
        this.ownsClient = ownsClient;
        this.keys = new KeyLayout(keyPrefix);
        this.scriptKeys = keys.scriptKeys();
        this.maxEntries = maxEntries;
        this.clock = Objects.requireNonNull(clock, "clock must not be null");
        this.script = redisson.getScript(StringCodec.INSTANCE);
    }

    /** Connects with the default prefix, bound and timeout, on the system clock. */
    public static RedisCacheStore connect(String url) {
        return connect(RedisStoreSettings.of(url), Clock.systemUTC());
    }

    /**
     * Connects its own client, shut down on {@link #close()}.
     *
     * @throws IllegalArgumentException if the URL is malformed
     * @throws IllegalStateException if Redis cannot be reached (or refuses the credentials) now;
     *     the message names the server, never the password
     */
    public static RedisCacheStore connect(RedisStoreSettings settings, Clock clock) {
        Objects.requireNonNull(clock, "clock must not be null");
        RedisUrl url = RedisUrl.parse(settings.url());
        RedissonClient client;
        try {
            client = Redisson.create(config(url, settings.timeout()));
        } catch (RedisException e) {
            throw new IllegalStateException("cannot reach Redis at " + url + ": " + e.getMessage(), e);
        }
        return new RedisCacheStore(client, true, settings.keyPrefix(), settings.maxEntries(), clock);
    }

    /**
     * Fails after one timeout, with no retry: on a store error the caller runs uncached, so a
     * retry would only add latency (and could count a hit twice). Reconnection goes on in the
     * background, backing off to at most two seconds between attempts.
     */
    static Config config(RedisUrl url, Duration timeout) {
        int millis = (int) timeout.toMillis();
        Config config = new Config();
        config.setUseScriptCache(true);
        config.setUsername(url.username());
        config.setPassword(url.password());
        config.useSingleServer()
                .setAddress(url.address())
                .setDatabase(url.database())
                .setConnectTimeout(millis)
                .setTimeout(millis)
                .setSubscriptionTimeout(millis)
                .setRetryAttempts(0)
                .setReconnectionDelay(new EqualJitterDelay(Duration.ofMillis(100), Duration.ofSeconds(2)))
                .setConnectionMinimumIdleSize(2)
                .setConnectionPoolSize(32)
                .setSubscriptionConnectionMinimumIdleSize(1);
        return config;
    }

    @Override
    public Optional<CacheEntry> get(String key) {
        return read(key, true);
    }

    @Override
    public Optional<CacheEntry> peek(String key) {
        return read(key, false);
    }

    private Optional<CacheEntry> read(String key, boolean touch) {
        List<Object> fields = script.eval(RScript.Mode.READ_WRITE, Scripts.GET, RScript.ReturnType.LIST,
                keys.getKeys(key), key, Long.toString(clock.millis()), touch ? "1" : "0");
        if (fields.size() < Scripts.ENTRY_FIELD_COUNT) {
            if (!fields.isEmpty()) {
                run(Scripts.EXPIRE, RScript.ReturnType.LONG, key);
            }
            return Optional.empty();
        }
        // in the order Scripts.GET returns them: expires, hits, value, console, exec, created, tools, sum
        return Optional.of(new CacheEntry(
                key,
                (String) fields.get(2),
                (String) fields.get(3),
                Duration.ofNanos(Long.parseLong((String) fields.get(4))),
                ToolVersions.decode((String) fields.get(6)),
                Instant.ofEpochMilli(Long.parseLong((String) fields.get(5))),
                Instant.ofEpochMilli(Long.parseLong((String) fields.get(0))),
                Long.parseLong((String) fields.get(1)),
                Long.parseLong((String) fields.get(7))));
    }

    @Override
    public void put(CacheEntry entry) {
        put(entry, null);
    }

    @Override
    public List<String> put(CacheEntry entry, GroupBound bound) {
        long expires = entry.expiresAt().toEpochMilli();
        long ttl = Math.max(1, expires - clock.millis());
        List<Object> args = new ArrayList<>(10 + entry.toolVersions().size());
        args.add(entry.key());
        args.add(Long.toString(ttl));
        args.add(Long.toString(expires));
        args.add(Long.toString(entry.estimatedBytes()));
        args.add(Integer.toString(maxEntries));
        args.add(entry.value());
        args.add(entry.console());
        args.add(Long.toString(entry.executionTime().toNanos()));
        args.add(Long.toString(entry.createdAt().toEpochMilli()));
        args.add(bound == null ? "" : bound.group());
        args.add(bound == null ? "0" : Integer.toString(bound.maxEntries()));
        args.add(Long.toString(entry.checksum()));
        args.add(ToolVersions.encode(entry.toolVersions()));
        args.addAll(entry.toolVersions().keySet());
        List<Object> evicted = run(Scripts.PUT, RScript.ReturnType.LIST, args.toArray());
        return evicted.stream().map(String::valueOf).toList();
    }

    @Override
    public boolean remove(String key) {
        return this.<Long>run(Scripts.REMOVE, RScript.ReturnType.LONG, key) > 0;
    }

    @Override
    public int removeByTool(String tool) {
        return this.<Long>run(Scripts.REMOVE_BY_TOOL, RScript.ReturnType.LONG, tool).intValue();
    }

    /** Matches the keys in this process with core's {@link Glob}; the bound keeps that list short. */
    @Override
    public int removeByPattern(String keyGlob) {
        Glob glob = Glob.of(keyGlob);
        Object[] matching = redisson.<String>getScoredSortedSet(keys.lru(), StringCodec.INSTANCE).readAll().stream()
                .filter(glob::matches)
                .toArray();
        if (matching.length == 0) {
            return 0;
        }
        return this.<Long>run(Scripts.REMOVE, RScript.ReturnType.LONG, matching).intValue();
    }

    @Override
    public void clear() {
        run(Scripts.CLEAR, RScript.ReturnType.LONG);
    }

    @Override
    public int size() {
        List<Object> purgedAndLeft = run(Scripts.PURGE, RScript.ReturnType.LIST);
        return toInt(purgedAndLeft.get(1));
    }

    @Override
    public long estimatedBytes() {
        return redisson.getAtomicLong(keys.bytes()).get();
    }

    @Override
    public int purgeExpired() {
        List<Object> purgedAndLeft = run(Scripts.PURGE, RScript.ReturnType.LIST);
        return toInt(purgedAndLeft.get(0));
    }

    @Override
    public void increment(String tool, Map<Counter, Long> deltas) {
        List<Object> args = new ArrayList<>();
        deltas.forEach((counter, delta) -> {
            args.add(counter.name());
            args.add(Long.toString(delta));
            if (tool != null) {
                args.add(TOOL_COUNTER_PREFIX + counter.name() + ":" + tool);
                args.add(Long.toString(delta));
            }
        });
        if (!args.isEmpty()) {
            run(Scripts.INCREMENT_ALL, RScript.ReturnType.LONG, args.toArray());
        }
    }

    @Override
    public Map<Counter, Long> counters() {
        Map<String, String> stored = redisson.<String, String>getMap(keys.counters(), StringCodec.INSTANCE).readAllMap();
        Map<Counter, Long> counters = zeroCounters();
        for (Counter counter : Counter.values()) {
            String value = stored.get(counter.name());
            counters.put(counter, value == null ? 0L : Long.parseLong(value));
        }
        return counters;
    }

    @Override
    public Map<String, Map<Counter, Long>> toolCounters() {
        Map<String, String> stored = redisson.<String, String>getMap(keys.counters(), StringCodec.INSTANCE).readAllMap();
        Map<String, Map<Counter, Long>> byTool = new TreeMap<>();
        stored.forEach((name, value) -> {
            if (name.startsWith(TOOL_COUNTER_PREFIX)) {
                int colon = name.indexOf(':', TOOL_COUNTER_PREFIX.length());
                Counter counter = Counter.valueOf(name.substring(TOOL_COUNTER_PREFIX.length(), colon));
                byTool.computeIfAbsent(name.substring(colon + 1), tool -> zeroCounters()).put(counter, Long.parseLong(value));
            }
        });
        return byTool;
    }

    private static Map<Counter, Long> zeroCounters() {
        Map<Counter, Long> counters = new EnumMap<>(Counter.class);
        for (Counter counter : Counter.values()) {
            counters.put(counter, 0L);
        }
        return counters;
    }

    @Override
    public Map<String, String> lastSeenVersions() {
        return Map.copyOf(redisson.<String, String>getMap(keys.versions(), StringCodec.INSTANCE).readAllMap());
    }

    @Override
    public void recordVersions(Map<String, String> versions) {
        if (!versions.isEmpty()) {
            redisson.<String, String>getMap(keys.versions(), StringCodec.INSTANCE).putAll(versions);
        }
    }

    /**
     * Takes the fleet-wide lock of {@code key}, a Redisson {@link RLock} whose lease lapses
     * after {@code maxHold}, so a holder that dies blocks the others no longer than that. The
     * lease releases the lock only while this lease still holds it; it never forces an unlock.
     */
    @Override
    public FlightLease acquireFlight(String key, Duration maxHold) throws InterruptedException {
        if (maxHold.isNegative() || maxHold.isZero()) {
            throw new IllegalArgumentException("maxHold must be positive: " + maxHold);
        }
        RLock lock = redisson.getLock(keys.flight(key));
        long millis = maxHold.toMillis();
        // Waiting twice the lease outlasts a holder that died, so one waiter takes over (and
        // finds the entry or runs) instead of every waiter giving up at once and running.
        if (!lock.tryLock(2 * millis, millis, TimeUnit.MILLISECONDS)) {
            return FlightLease.LOCAL;
        }
        return new HeldFlight(lock, Thread.currentThread().getId());
    }

    /** Shuts the client down if this store connected it. */
    @Override
    public void close() {
        if (ownsClient && closed.compareAndSet(false, true)) {
            redisson.shutdown();
        }
    }

    @Override
    public String toString() {
        return "RedisCacheStore[prefix=" + keys.prefix() + ", maxEntries=" + maxEntries + "]";
    }

    private <R> R run(String lua, RScript.ReturnType returnType, Object... args) {
        Object[] values = new Object[args.length + 2];
        values[0] = keys.prefix();
        values[1] = Long.toString(clock.millis());
        System.arraycopy(args, 0, values, 2, args.length);
        return script.eval(RScript.Mode.READ_WRITE, lua, returnType, scriptKeys, values);
    }

    private static int toInt(Object reply) {
        return Integer.parseInt(String.valueOf(reply));
    }

    /** Closable from any thread: the unlock names the thread that took the lock. */
    private static final class HeldFlight implements FlightLease {
        private final RLock lock;
        private final long ownerThread;
        private final AtomicBoolean closed = new AtomicBoolean();

        HeldFlight(RLock lock, long ownerThread) {
            this.lock = lock;
            this.ownerThread = ownerThread;
        }

        @Override
        public void close() {
            if (!closed.compareAndSet(false, true)) {
                return;
            }
            try {
                if (lock.isHeldByThread(ownerThread)) {
                    lock.unlockAsync(ownerThread).toCompletableFuture().join();
                }
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.DEBUG, () -> "flight " + lock.getName()
                        + " not released (it lapses at its lease time): " + e.getMessage());
            }
        }
    }
}
