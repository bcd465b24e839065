package dev.execache.store.redis;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.execache.core.Glob;
import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.CacheStore;
import dev.execache.core.spi.Counter;
import dev.execache.core.spi.FlightLease;
import dev.execache.core.spi.GroupBound;
import dev.execache.core.spi.StoreCounters;
import dev.execache.core.spi.WriteGenerations;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.redisson.Redisson;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.api.redisnode.RedisNodes;
import org.redisson.client.RedisException;
import org.redisson.client.codec.StringCodec;

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
 * <p>Every operation waits at most the configured timeout (its budget) for Redis, counting
 * only time this process could run ({@link Budget}: a loaded machine is not a slow Redis). When
 * Redis does not answer in time or cannot be reached, the operation throws a {@link RedisException}
 * with a one-line message, and a circuit breaker makes every later operation throw at once,
 * until Redis is found answering again (a check in the background, or the late reply): a slow
 * or absent Redis costs a caller one timeout per outage, not one per operation. The same
 * instance works again once the server is back.
 */
public final class RedisCacheStore implements CacheStore {
    private final StoreCounters figures = new Counters();
    private final WriteGenerations writes = new Writes();
    private static final System.Logger LOG = System.getLogger(RedisCacheStore.class.getName());
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * How long a flight lapses after its holder stops renewing it (it died, or lost Redis): the
     * holder renews it every third of that for as long as it runs, so a live holder keeps it
     * whatever the run's timeout, and a dead one blocks the fleet for no more than this.
     */
    static final Duration FLIGHT_LEASE = Duration.ofSeconds(6);

    /** How soon a waiter first asks again whether the flight is free; it then waits twice as long each time. */
    static final Duration FIRST_POLL = Duration.ofMillis(20);
    static final Duration MAX_POLL = Duration.ofMillis(250);

    /** An agent's own counters are the fields {@code agent:<COUNTER>:<agent>} of the counters hash (see {@link Scripts#INCREMENT_ALL}). */
    private static final String AGENT_COUNTER_PREFIX = "agent:";
    /** A tool's own counters are the fields {@code tool:<COUNTER>:<tool>} of the counters hash. */
    private static final String TOOL_COUNTER_PREFIX = "tool:";
    /** Servers whose eviction policy was warned about: once per process and server. */
    private static final Set<String> WARNED_SERVERS = ConcurrentHashMap.newKeySet();

    private final RedissonClient redisson;
    private final boolean ownsClient;
    private final KeyLayout keys;
    private final List<Object> scriptKeys;
    private final int maxEntries;
    private final Clock clock;
    private final RScript script;
    private final String server;
    private final Duration timeout;
    private final RedisFailures failures;
    private final Breaker breaker;
    private final SigningKeys signingKeys;
    /** Renews the flights this process holds; stopped on close, so they lapse as a dead holder's do. */
    private final ScheduledExecutorService renewals;
    /**
     * Sends the commands issued before the client has connected. Redisson connects on its first
     * command, in the thread that sends it, and waits there for the connection pool (its connect
     * timeout for each pooled connection, whatever a caller's budget): a fresh process whose
     * first command met a paused Redis waited out the pause. Here that wait is this thread's,
     * and the caller waits for the reply within its budget as for any other.
     */
    private final ExecutorService connector;
    /** Whether a command was sent: Redisson connected, and commands are sent from the caller's thread. */
    private volatile boolean connected;
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * Uses a client the caller already has, and leaves it open on {@link #close()}: an
     * application keeps one {@link RedissonClient} for everything.
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
        this(redisson, false, "Redis", keyPrefix, maxEntries, timeout, signingKeys, clock);
    }

    private RedisCacheStore(RedissonClient redisson, boolean ownsClient, String server, String keyPrefix, int maxEntries,
            Duration timeout, SigningKeys signingKeys, Clock clock) {
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
        this.server = server;
        this.timeout = timeout;
        this.failures = new RedisFailures(server, timeout);
        this.breaker = new Breaker(server, this::check, timeout);
        this.signingKeys = Objects.requireNonNull(signingKeys, "signingKeys must not be null");
        ScheduledThreadPoolExecutor renewing = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, "execache-redis-flights");
            thread.setDaemon(true);
            return thread;
        });
        renewing.setRemoveOnCancelPolicy(true);
        this.renewals = renewing;
        this.connector = Executors.newSingleThreadExecutor(runnable -> {
            Thread thread = new Thread(runnable, "execache-redis-connect");
            thread.setDaemon(true);
            return thread;
        });
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
            store.await(store::check);
        } catch (RedisException e) {
            store.close();
            throw new IllegalStateException(e.getMessage(), e);
        }
        store.checkEvictionPolicy();
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
        store.check();
        store.checkEvictionPolicy();
        return store;
    }

    private static RedisCacheStore create(RedisStoreSettings settings, Clock clock) {
        Objects.requireNonNull(clock, "clock must not be null");
        RedisUrl url = RedisUrl.parse(settings.url());
        RedissonClient client = Redisson.create(RedissonConfig.of(url, settings.timeout()));
        settings.unsignedWarning().ifPresent(warning -> LOG.log(System.Logger.Level.WARNING, warning));
        return new RedisCacheStore(client, true, url.toString(), settings.keyPrefix(),
                settings.maxEntries(), settings.timeout(), settings.signingKeys(), clock);
    }

    /**
     * Warns once per server, in one line, when Redis's {@code maxmemory-policy} may evict keys
     * that have no TTL: execache's indexes, counters and versions (only its entries carry one).
     * {@code noeviction} and the {@code volatile-*} policies keep them. Asked in the background;
     * a Redis that refuses {@code CONFIG} (disabled or renamed, as managed services do) is left
     * unchecked with a debug line.
     */
    CompletableFuture<?> checkEvictionPolicy() {
        try {
            return send(() -> redisson.getRedisNodes(RedisNodes.SINGLE).getInstance().getConfigAsync("maxmemory-policy"))
                    .whenComplete((config, error) -> {
                        if (error != null || config == null) {
                            LOG.log(System.Logger.Level.DEBUG, () -> "cannot read the maxmemory-policy of Redis at "
                                    + server + ": " + (error == null ? "no answer" : describe(error)));
                            return;
                        }
                        evictionPolicyWarning(server, config.get("maxmemory-policy"))
                                .filter(warning -> WARNED_SERVERS.add(server))
                                .ifPresent(warning -> LOG.log(System.Logger.Level.WARNING, warning));
                    });
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, () -> "cannot read the maxmemory-policy of Redis at " + server + ": " + e);
            return CompletableFuture.completedFuture(null);
        }
    }

    /**
     * Why {@link #size()} is only an estimate, if it is: Redis's {@code maxmemory-policy} may
     * evict execache's indexes (an {@code allkeys-*} policy), so the entries it counts may differ
     * from those Redis holds. Empty under {@code noeviction} and the {@code volatile-*} policies,
     * which keep them, and for a Redis that does not tell its policy. Asks Redis, within the budget.
     */
    public Optional<String> entriesEstimatedBecause() {
        try {
            Map<String, String> config = await(() -> redisson.getRedisNodes(RedisNodes.SINGLE).getInstance()
                    .getConfigAsync("maxmemory-policy"));
            String policy = config == null ? null : config.get("maxmemory-policy");
            return policy != null && policy.startsWith("allkeys-")
                    ? Optional.of("Redis's maxmemory-policy " + policy + " may evict execache's indexes")
                    : Optional.empty();
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    /** The warning for a policy that may evict keys without a TTL, if {@code policy} is one. */
    static Optional<String> evictionPolicyWarning(String server, String policy) {
        if (policy == null || !policy.startsWith("allkeys-")) {
            return Optional.empty();
        }
        return Optional.of("Redis at " + server + " has maxmemory-policy " + policy + ", which may evict execache's"
                + " indexes and counters when memory is full (stats and bounds then drift); set noeviction or a"
                + " volatile-* policy such as volatile-lru: execache's entries have a TTL, its own keys do not");
    }

    /** One cheap command, to learn whether Redis answers. */
    private CompletableFuture<?> check() {
        return send(() -> redisson.getBucket(keys.counters(), StringCodec.INSTANCE).isExistsAsync());
    }

    /**
     * Sends a command: from the caller's thread once the client has connected, before that from
     * {@link #connector}, so that no caller waits for the connection outside its budget.
     */
    private <R> CompletableFuture<R> send(Supplier<? extends CompletionStage<R>> operation) {
        if (connected) {
            return operation.get().toCompletableFuture();
        }
        try {
            return CompletableFuture.supplyAsync(() -> {
                CompletionStage<R> sent = operation.get();
                connected = true;
                return sent;
            }, connector).thenCompose(sent -> sent);
        } catch (RejectedExecutionException e) {
            return CompletableFuture.failedFuture(new RedisStoreException("the store for Redis at " + server + " is closed"));
        }
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
        List<Object> fields = await(() -> script.evalAsync(RScript.Mode.READ_WRITE, Scripts.GET, RScript.ReturnType.LIST,
                keys.getKeys(key), key, Long.toString(clock.millis()), touch ? "1" : "0"));
        if (fields.size() < Scripts.ENTRY_FIELD_COUNT - 2) {
            if (!fields.isEmpty()) {
                run(Scripts.EXPIRE, RScript.ReturnType.LONG, key);
            }
            return Optional.empty();
        }
        // in the order Scripts.GET returns them: expires, hits, value, console, exec, created, tools, sum, label, sig
        // (Redis ends the list at the first field missing: an entry written before labels has no label)
        String label = fields.size() > 8 ? (String) fields.get(8) : null;
        String signature = fields.size() > 9 ? (String) fields.get(9) : null;
        if (!signingKeys.isEmpty() && !signingKeys.verifies(signed(key, fields, label), signature)) {
            reject(key, signature);
            return Optional.empty();
        }
        return Optional.of(new CacheEntry(
                key,
                (String) fields.get(2),
                (String) fields.get(3),
                Duration.ofNanos(Long.parseLong((String) fields.get(4))),
                ToolVersions.decode((String) fields.get(6)),
                Instant.ofEpochMilli(Long.parseLong((String) fields.get(5))),
                Instant.ofEpochMilli(Long.parseLong((String) fields.get(0))),
                Long.parseLong((String) fields.get(1)),
                label,
                Long.parseLong((String) fields.get(7))));
    }

    /**
     * What a signature covers: the key and every field written with the entry (value, console,
     * execution time, created, expires, tool versions, checksum, label), all but the hit count.
     */
    private static List<String> signed(String key, List<Object> fields, String label) {
        return List.of(key, (String) fields.get(2), (String) fields.get(3), (String) fields.get(4), (String) fields.get(5),
                (String) fields.get(0), (String) fields.get(6), (String) fields.get(7), label == null ? "" : label);
    }

    /**
     * Removes an entry no fleet key signed, unless it was replaced meanwhile, and counts it as
     * damaged: it is never served. Logged once: removed, it is not read again.
     */
    private void reject(String key, String signature) {
        long removed = this.<Long>run(Scripts.REJECT, RScript.ReturnType.LONG, key, signature == null ? "" : signature);
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

    /** @param seen the write generations as JSON, '' for none; empty if one moved */
    private Optional<List<String>> put(CacheEntry entry, GroupBound bound, String seen) {
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
        args.add(entry.label());
        args.add(signingKeys.isEmpty() ? "" : signingKeys.sign(List.of(entry.key(), entry.value(), entry.console(),
                Long.toString(entry.executionTime().toNanos()), Long.toString(entry.createdAt().toEpochMilli()),
                Long.toString(expires), ToolVersions.encode(entry.toolVersions()), Long.toString(entry.checksum()),
                entry.label())));
        args.add(seen);
        args.addAll(entry.toolVersions().keySet());
        List<Object> evicted = run(Scripts.PUT, RScript.ReturnType.LIST, args.toArray());
        return evicted == null ? Optional.empty() : Optional.of(evicted.stream().map(String::valueOf).toList());
    }

    /** Reads the keys the recency index names, each as {@link #peek}; the bound keeps that list short. */
    @Override
    public List<CacheEntry> entries() {
        List<CacheEntry> live = new ArrayList<>();
        for (String key : await(() -> redisson.<String>getScoredSortedSet(keys.lru(), StringCodec.INSTANCE).readAllAsync())) {
            read(key, false).ifPresent(live::add);
        }
        return live;
    }

    @Override
    public boolean remove(String key) {
        return this.<Long>run(Scripts.REMOVE, RScript.ReturnType.LONG, key) > 0;
    }

    @Override
    public int removeByTool(String tool) {
        return this.<Long>run(Scripts.REMOVE_BY_TOOL, RScript.ReturnType.LONG, tool).intValue();
    }

    @Override
    public int removeByTool(String tool, String version) {
        Objects.requireNonNull(version, "version must not be null");
        return this.<Long>run(Scripts.REMOVE_BY_TOOL, RScript.ReturnType.LONG, tool, version).intValue();
    }

    /** Matches the keys in this process with core's {@link Glob}; the bound keeps that list short. */
    @Override
    public int removeByPattern(Glob glob) {
        Object[] matching = await(() -> redisson.<String>getScoredSortedSet(keys.lru(), StringCodec.INSTANCE).readAllAsync())
                .stream()
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
        return await(() -> redisson.getAtomicLong(keys.bytes()).getAsync());
    }

    @Override
    public int purgeExpired() {
        List<Object> purgedAndLeft = run(Scripts.PURGE, RScript.ReturnType.LIST);
        return toInt(purgedAndLeft.get(0));
    }

    @Override
    public StoreCounters counters() {
        return figures;
    }

    @Override
    public WriteGenerations writeGenerations() {
        return writes;
    }

    /** One hash for the fleet; the check of a put on condition is in {@link Scripts#PUT}. */
    private final class Writes implements WriteGenerations {
        @Override
        public long current(String server) {
            String generation = await(() -> redisson.<String, String>getMap(keys.writes(), StringCodec.INSTANCE)
                    .getAsync(server));
            return generation == null ? 0 : Long.parseLong(generation);
        }

        @Override
        public void advance(String server) {
            await(() -> script.<Long>evalAsync(RScript.Mode.READ_WRITE, Scripts.ADVANCE_WRITES, RScript.ReturnType.LONG,
                    List.of(keys.writes()), server));
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








    private static Map<Counter, Long> noCounts() {
        Map<Counter, Long> counters = new EnumMap<>(Counter.class);
        for (Counter counter : Counter.values()) {
            counters.put(counter, 0L);
        }
        return counters;
    }

    @Override
    public Map<String, String> lastSeenVersions(String scope) {
        return Map.copyOf(await(() -> redisson.<String, String>getMap(keys.versions(scope), StringCodec.INSTANCE)
                .readAllMapAsync()));
    }

    @Override
    public void recordVersions(String scope, Map<String, String> versions) {
        if (!versions.isEmpty()) {
            await(() -> redisson.<String, String>getMap(keys.versions(scope), StringCodec.INSTANCE).putAllAsync(versions));
        }
    }

    /**
     * Takes the fleet-wide flight of {@code key}: a key in Redis holding this holder's random
     * token, set only if absent, with {@link #FLIGHT_LEASE} as its TTL, which this process renews
     * while it holds it. A waiter asks again after 20 ms, then less often, up to every 250 ms,
     * for as long as a live holder may run ({@code maxHold}) plus one lease, then gives up and
     * gets {@link FlightLease#LOCAL}. Each ask is one short command under the same budget and
     * breaker as every other operation; nothing waits on a subscription. (Redisson's {@code RLock}
     * waits on pub/sub: on a loaded machine its subscriptions timed out, the waiter ran the code
     * itself, and the timeout stopped the whole process from using Redis for a while.)
     */
    @Override
    public FlightLease acquireFlight(String key, Duration maxHold) throws InterruptedException {
        if (maxHold.isNegative() || maxHold.isZero()) {
            throw new IllegalArgumentException("maxHold must be positive: " + maxHold);
        }
        String flight = keys.flight(key);
        String token = UUID.randomUUID().toString();
        long waitNanos = maxHold.plus(FLIGHT_LEASE).toNanos();
        long start = System.nanoTime();
        long pause = FIRST_POLL.toNanos();
        while (!Boolean.TRUE.equals(await(() -> redisson.<String>getBucket(flight, StringCodec.INSTANCE)
                .setIfAbsentAsync(token, FLIGHT_LEASE)))) {
            if (System.nanoTime() - start >= waitNanos) {
                LOG.log(System.Logger.Level.WARNING, "waited " + TimeUnit.NANOSECONDS.toSeconds(waitNanos)
                        + " s for another instance's run of " + key + " (it still holds the flight in Redis at "
                        + server + "): running it here as well");
                return FlightLease.LOCAL;
            }
            TimeUnit.NANOSECONDS.sleep(pause);
            pause = Math.min(2 * pause, MAX_POLL.toNanos());
        }
        return new HeldFlight(flight, token);
    }

    /** Shuts the client down if this store connected it. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            breaker.close();
            renewals.shutdownNow();
            connector.shutdownNow();
            if (ownsClient) {
                redisson.shutdown();
            }
        }
    }

    @Override
    public String toString() {
        return "RedisCacheStore[prefix=" + keys.prefix() + ", maxEntries=" + maxEntries + "]";
    }

    private <R> R run(String lua, RScript.ReturnType returnType, Object... args) {
        Object[] values = new Object[args.length + 2];
        values[0] = keys.root();
        values[1] = Long.toString(clock.millis());
        System.arraycopy(args, 0, values, 2, args.length);
        return await(() -> script.evalAsync(RScript.Mode.READ_WRITE, lua, returnType, scriptKeys, values));
    }

    /**
     * Runs one operation within the budget, unless the breaker says Redis is being skipped. A
     * failure for want of Redis opens the breaker.
     */
    private <R> R await(Supplier<? extends CompletionStage<R>> operation) {
        breaker.admit();
        CompletableFuture<R> reply;
        try {
            reply = send(operation);
        } catch (RuntimeException e) {
            throw failed(e);
        }
        try {
            return Budget.await(reply, timeout);
        } catch (TimeoutException e) {
            RedisStoreException because = RedisStoreException.timedOut(notAnswering() + e.getMessage(), null);
            breaker.open(because);
            // a reply after all is the surest sign Redis answers again
            reply.whenComplete((value, error) -> {
                if (error == null) {
                    breaker.answered();
                }
            });
            throw because;
        } catch (ExecutionException e) {
            throw failed(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RedisStoreException("interrupted while waiting for Redis at " + server);
        }
    }

    private String notAnswering() {
        return "Redis at " + server + " did not answer within " + timeout.toMillis() + " ms";
    }

    /**
     * Opens the breaker unless Redis answered: with an error about the command itself, or
     * refusing a write (out of memory under {@code noeviction}, a read-only replica), which
     * leaves reads as they were.
     */
    private RedisStoreException failed(Throwable error) {
        RedisStoreException failure = failures.classify(error);
        if (failures.isOutage(error)) {
            breaker.open(failure);
        }
        return failure;
    }

    /** One line for people, naming the server; never the password, client internals or a script. */
    String describe(Throwable error) {
        return failures.describe(error);
    }

    private static int toInt(Object reply) {
        return Integer.parseInt(String.valueOf(reply));
    }

    /** A flight this process holds: renewed every third of the lease until closed, from any thread. */
    private final class HeldFlight implements FlightLease {
        private final String flight;
        private final String token;
        private final ScheduledFuture<?> renewal;
        private final AtomicBoolean released = new AtomicBoolean();

        HeldFlight(String flight, String token) {
            this.flight = flight;
            this.token = token;
            long third = FLIGHT_LEASE.toMillis() / 3;
            this.renewal = renewals.scheduleAtFixedRate(this::renew, third, third, TimeUnit.MILLISECONDS);
        }

        /** Sent without waiting: a renewal that fails is tried again a third of a lease later. */
        private void renew() {
            try {
                flightScript(Scripts.RENEW_FLIGHT, Long.toString(FLIGHT_LEASE.toMillis())).whenComplete((renewed, error) -> {
                    if (error == null && renewed == 0) {
                        renewal.cancel(false);
                        LOG.log(System.Logger.Level.DEBUG, () -> "flight " + flight + " lapsed before its holder ended");
                    }
                });
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.DEBUG, () -> "flight " + flight + " not renewed: " + e.getMessage());
            }
        }

        private CompletableFuture<Long> flightScript(String lua, String... extra) {
            Object[] values = new Object[1 + extra.length];
            values[0] = token;
            System.arraycopy(extra, 0, values, 1, extra.length);
            return script.<Long>evalAsync(RScript.Mode.READ_WRITE, lua, RScript.ReturnType.LONG, List.of(flight), values)
                    .toCompletableFuture();
        }

        @Override
        public void close() {
            if (!released.compareAndSet(false, true)) {
                return;
            }
            renewal.cancel(false);
            try {
                Budget.await(flightScript(Scripts.RELEASE_FLIGHT), timeout);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException | TimeoutException | RuntimeException e) {
                LOG.log(System.Logger.Level.DEBUG, () -> "flight " + flight + " not released (it lapses within "
                        + FLIGHT_LEASE.toSeconds() + " s): " + e.getMessage());
            }
        }
    }


    /** The figures kept beside the entries; see {@link StoreCounters}. */
    private final class Counters implements StoreCounters {
        @Override
        public void increment(String tool, String agent, Map<Counter, Long> deltas) {
            if (deltas.isEmpty()) {
                return;
            }
            List<Object> args = new ArrayList<>(List.of(agent == null ? "" : agent, Integer.toString(MAX_AGENTS),
                    OTHER_AGENT, Integer.toString(deltas.size() * (tool == null ? 1 : 2))));
            deltas.forEach((counter, delta) -> {
                args.add(counter.name());
                args.add(Long.toString(delta));
                if (tool != null) {
                    args.add(TOOL_COUNTER_PREFIX + counter.name() + ":" + tool);
                    args.add(Long.toString(delta));
                }
            });
            if (agent != null) {
                deltas.forEach((counter, delta) -> {
                    args.add(counter.name());
                    args.add(Long.toString(delta));
                });
            }
            run(Scripts.INCREMENT_ALL, RScript.ReturnType.LONG, args.toArray());
        }

        @Override
        public Map<String, Map<Counter, Long>> perAgent() {
            Map<String, String> stored = await(() -> redisson.<String, String>getMap(keys.counters(), StringCodec.INSTANCE)
                    .readAllMapAsync());
            Map<String, Map<Counter, Long>> byAgent = new TreeMap<>();
            stored.forEach((name, value) -> {
                if (name.startsWith(AGENT_COUNTER_PREFIX)) {
                    int colon = name.indexOf(':', AGENT_COUNTER_PREFIX.length());
                    Counter.named(name.substring(AGENT_COUNTER_PREFIX.length(), colon)).ifPresent(counter -> byAgent
                            .computeIfAbsent(name.substring(colon + 1), agent -> noCounts()).put(counter, Long.parseLong(value)));
                }
            });
            return byAgent;
        }

        @Override
        public Map<Counter, Long> totals() {
            Map<String, String> stored = await(() -> redisson.<String, String>getMap(keys.counters(), StringCodec.INSTANCE)
                    .readAllMapAsync());
            Map<Counter, Long> counters = noCounts();
            for (Counter counter : Counter.values()) {
                String value = stored.get(counter.name());
                counters.put(counter, value == null ? 0L : Long.parseLong(value));
            }
            return counters;
        }

        @Override
        public Map<String, Map<Counter, Long>> perTool() {
            Map<String, String> stored = await(() -> redisson.<String, String>getMap(keys.counters(), StringCodec.INSTANCE)
                    .readAllMapAsync());
            Map<String, Map<Counter, Long>> byTool = new TreeMap<>();
            stored.forEach((name, value) -> {
                if (name.startsWith(TOOL_COUNTER_PREFIX)) {
                    int colon = name.indexOf(':', TOOL_COUNTER_PREFIX.length());
                    Counter.named(name.substring(TOOL_COUNTER_PREFIX.length(), colon)).ifPresent(counter -> byTool
                            .computeIfAbsent(name.substring(colon + 1), tool -> noCounts()).put(counter, Long.parseLong(value)));
                }
            });
            return byTool;
        }

        @Override
        public void zero() {
            run(Scripts.ZERO_COUNTERS, RScript.ReturnType.LONG);
        }

        @Override
        public Optional<Instant> countingSince() {
            String since = await(() -> redisson.<String, String>getMap(keys.counters(), StringCodec.INSTANCE).getAsync("since"));
            return since == null ? Optional.empty() : Optional.of(Instant.ofEpochMilli(Long.parseLong(since)));
        }
    }
}
