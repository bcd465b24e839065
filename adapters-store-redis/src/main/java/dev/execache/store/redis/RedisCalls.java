package dev.execache.store.redis;

import dev.execache.store.redis.KeyLayout.Partition;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/**
 * How the store talks to Redis: each command within the budget ({@link Budget}), behind the
 * breaker of the partition it is for, and several partitions' commands at once.
 *
 * <p>A standalone Redis or a Sentinel set is one server: one breaker stands for every partition,
 * and an outage fails every call, for the caller's guard to tell. A Cluster has a breaker per
 * partition, so a failed master costs only its partitions: a call whose partition does not answer
 * while others do is {@linkplain #absorbs absorbed} (a read misses, a put is dropped, the caller
 * runs uncached), every partition is then asked at once, and one line tells how much of the cache
 * the outage touches; another when every partition answers again.
 */
final class RedisCalls implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(RedisCacheStore.class.getName());

    private final RedissonClient redisson;
    private final RScript script;
    private final String server;
    private final Duration timeout;
    private final KeyLayout layout;
    private final RedisFailures failures;
    /** Indexed by partition; all one breaker for a single server. */
    private final Breaker[] breakers;
    private final boolean perPartition;
    /**
     * Sends the commands issued before the client has connected. Redisson connects on its first
     * command, in the thread that sends it, and waits there for the connection pool (its connect
     * timeout for each pooled connection, whatever a caller's budget): a fresh process whose
     * first command met a paused Redis waited out the pause. Here that wait is this thread's,
     * and the caller waits for the reply within its budget as for any other.
     */
    private final ExecutorService connector;
    /** Asks every partition when one stopped answering, off the caller's thread. */
    private final ExecutorService prober;
    /** Whether a command was sent: Redisson connected, and commands are sent from the caller's thread. */
    private volatile boolean connected;
    private final AtomicBoolean probing = new AtomicBoolean();
    /** How many used partitions the last outage line told of; 0 while none is told. */
    private int toldDown;
    /** Calls absorbed in the partial outage going on: added to the store errors when it ends. */
    private final AtomicLong absorbed = new AtomicLong();
    private volatile Runnable onRecovered = () -> { };

    RedisCalls(RedissonClient redisson, String server, Duration timeout, KeyLayout layout, boolean perPartition) {
        this.redisson = redisson;
        this.script = redisson.getScript(StringCodec.INSTANCE);
        this.server = server;
        this.timeout = timeout;
        this.layout = layout;
        this.failures = new RedisFailures(server, timeout);
        this.perPartition = perPartition;
        this.breakers = new Breaker[layout.partitions()];
        if (perPartition) {
            for (Partition partition : layout.all()) {
                breakers[partition.index()] = new Breaker(server, () -> check(partition), timeout, this::answered);
            }
        } else {
            Breaker one = new Breaker(server, () -> check(layout.partition(0)), timeout, () -> { });
            java.util.Arrays.fill(breakers, one);
        }
        this.connector = Executors.newSingleThreadExecutor(daemon("execache-redis-connect"));
        this.prober = Executors.newSingleThreadExecutor(daemon("execache-redis-probe"));
    }

    private static java.util.concurrent.ThreadFactory daemon(String name) {
        return runnable -> {
            Thread thread = new Thread(runnable, name);
            thread.setDaemon(true);
            return thread;
        };
    }

    RedissonClient redisson() {
        return redisson;
    }

    RScript script() {
        return script;
    }

    String server() {
        return server;
    }

    Duration timeout() {
        return timeout;
    }

    /** What to do once every partition answers again after a partial outage, with the calls it absorbed. */
    void onRecovered(java.util.function.LongConsumer recovered) {
        this.onRecovered = () -> {
            long calls = absorbed.getAndSet(0);
            if (calls > 0) {
                recovered.accept(calls);
            }
        };
    }

    /** One cheap command on the partition, to learn whether its node answers. */
    CompletableFuture<?> check(Partition partition) {
        return send(() -> redisson.getBucket(partition.counters(), StringCodec.INSTANCE).isExistsAsync());
    }

    /**
     * Sends a command: from the caller's thread once the client has connected, before that from
     * {@link #connector}, so that no caller waits for the connection outside its budget.
     */
    <R> CompletableFuture<R> send(Supplier<? extends CompletionStage<R>> operation) {
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

    /** Runs a script of {@link Scripts} on the partition, with its root and the caller's clock first. */
    <R> R run(Partition partition, long now, String lua, RScript.ReturnType returnType, Object... args) {
        return await(partition, () -> eval(partition, now, lua, returnType, args));
    }

    <R> CompletionStage<R> eval(Partition partition, long now, String lua, RScript.ReturnType returnType, Object... args) {
        Object[] values = new Object[args.length + 2];
        values[0] = partition.root();
        values[1] = Long.toString(now);
        System.arraycopy(args, 0, values, 2, args.length);
        return script.evalAsync(RScript.Mode.READ_WRITE, lua, returnType, partition.scriptKeys(), values);
    }

    /**
     * Runs one operation on a partition within the budget, unless its breaker says it is being
     * skipped. A failure for want of Redis opens the breaker.
     */
    <R> R await(Partition partition, Supplier<? extends CompletionStage<R>> operation) {
        Breaker breaker = breakers[partition.index()];
        breaker.admit();
        CompletableFuture<R> reply;
        try {
            reply = send(operation);
        } catch (RuntimeException e) {
            throw failed(breaker, e);
        }
        try {
            return Budget.await(reply, timeout);
        } catch (TimeoutException e) {
            throw timedOut(breaker, reply, e);
        } catch (ExecutionException e) {
            throw failed(breaker, e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RedisStoreException("interrupted while waiting for Redis at " + server);
        }
    }

    /**
     * Runs one operation on each partition, all at once, within one budget, and returns their
     * replies in the partitions' order. With {@code skipUnanswering}, for figures: during a
     * partial outage the partitions that do not answer are left out (null in their place); else
     * a partition that fails fails the whole call, as a removal must.
     */
    <R> List<R> everywhere(List<Partition> partitions, boolean skipUnanswering,
            Function<Partition, ? extends CompletionStage<R>> operation) {
        List<CompletableFuture<R>> replies = new ArrayList<>(partitions.size());
        RedisStoreException first = null;
        for (Partition partition : partitions) {
            Breaker breaker = breakers[partition.index()];
            try {
                breaker.admit();
                replies.add(send(() -> operation.apply(partition)));
            } catch (RedisStoreException e) {
                if (!skipUnanswering || !absorbs(partition, e)) {
                    first = first == null ? e : first;
                }
                replies.add(null);
            } catch (RuntimeException e) {
                RedisStoreException failure = failed(breaker, e);
                first = first == null ? failure : first;
                replies.add(null);
            }
        }
        List<CompletableFuture<R>> sent = replies.stream().filter(reply -> reply != null).toList();
        try {
            Budget.await(CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new)).handle((ok, error) -> null), timeout);
        } catch (TimeoutException e) {
            // each late reply opens its own partition's breaker below
        } catch (ExecutionException e) {
            throw new IllegalStateException("cannot happen: failures are handled per reply", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RedisStoreException("interrupted while waiting for Redis at " + server);
        }
        List<R> results = new ArrayList<>(partitions.size());
        for (int i = 0; i < partitions.size(); i++) {
            CompletableFuture<R> reply = replies.get(i);
            if (reply == null) {
                results.add(null);
                continue;
            }
            Partition partition = partitions.get(i);
            Breaker breaker = breakers[partition.index()];
            RedisStoreException failure;
            if (!reply.isDone()) {
                failure = timedOut(breaker, reply, new TimeoutException(""));
            } else if (reply.isCompletedExceptionally()) {
                failure = failed(breaker, reply.handle((value, error) -> error).join());
            } else {
                results.add(reply.join());
                continue;
            }
            if (!skipUnanswering || !absorbs(partition, failure)) {
                first = first == null ? failure : first;
            }
            results.add(null);
        }
        if (first != null) {
            throw first;
        }
        return results;
    }

    private RedisStoreException timedOut(Breaker breaker, CompletableFuture<?> reply, TimeoutException e) {
        RedisStoreException because = RedisStoreException.timedOut(notAnswering() + e.getMessage(), null);
        breaker.open(because);
        // a reply after all is the surest sign Redis answers again
        reply.whenComplete((value, error) -> {
            if (error == null) {
                breaker.answered();
            }
        });
        return because;
    }

    private String notAnswering() {
        return "Redis at " + server + " did not answer within " + timeout.toMillis() + " ms";
    }

    /**
     * Opens the breaker unless Redis answered: with an error about the command itself, or
     * refusing a write (out of memory under {@code noeviction}, a read-only replica), which
     * leaves reads as they were.
     */
    private RedisStoreException failed(Breaker breaker, Throwable error) {
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

    /** Whether the partition's breaker is closed: its node is taken to answer. */
    boolean answers(Partition partition) {
        return !breakers[partition.index()].isOpen();
    }

    /**
     * Whether this failure of one partition's call is taken by the store rather than the caller:
     * on a Cluster, when the partition's node is out (its breaker open) while some partition the
     * store uses still answers. The first such failure of an outage sets off a probe of every
     * partition, which tells the outage in one line once it knows how far it reaches.
     */
    boolean absorbs(Partition partition, RedisStoreException failure) {
        if (!perPartition || answers(partition)) {
            return false;
        }
        if (layout.usedPartitions().stream().noneMatch(this::answers)) {
            return false;
        }
        absorbed.incrementAndGet();
        if (probing.compareAndSet(false, true)) {
            try {
                prober.execute(() -> probe(failure));
            } catch (RejectedExecutionException closed) {
                probing.set(false);
            }
        }
        return true;
    }

    /** Asks every partition at once; tells the outage once, with the share of the cache it touches. */
    private void probe(RedisStoreException failure) {
        try {
            List<Partition> used = layout.usedPartitions();
            try {
                everywhere(used.stream().filter(this::answers).toList(), true,
                        partition -> redisson.getBucket(partition.counters(), StringCodec.INSTANCE).isExistsAsync());
            } catch (RuntimeException e) {
                // each partition that failed opened its breaker; the count below is what matters
            }
            long down = used.stream().filter(partition -> !answers(partition)).count();
            synchronized (this) {
                if (down == used.size() || down <= toldDown) {
                    // every partition out: each call now fails, and the caller's guard tells the outage
                    return;
                }
                toldDown = (int) down;
            }
            LOG.log(System.Logger.Level.WARNING, "cache in Redis at " + server + ": " + down + " of " + used.size()
                    + " partitions (" + Math.round(100.0 * down / used.size()) + "% of the cache) do not answer ("
                    + failure.getMessage() + "); calls whose keys are there run uncached, the others keep their cache,"
                    + " until they answer again");
        } finally {
            probing.set(false);
        }
    }

    /** A partition's breaker closed: once every partition answers, the partial outage is over. */
    private void answered() {
        int told;
        synchronized (this) {
            if (toldDown == 0 || layout.all().stream().anyMatch(partition -> !answers(partition))) {
                return;
            }
            told = toldDown;
            toldDown = 0;
        }
        long failed = absorbed.get();
        LOG.log(System.Logger.Level.INFO, "cache in Redis at " + server + ": the " + told
                + (told == 1 ? " partition" : " partitions") + " that did not answer answer again, after " + failed
                + (failed == 1 ? " store operation" : " store operations") + " failed there; caching resumed");
        try {
            // off the breaker's thread: writing the count is a Redis call of its own
            prober.execute(onRecovered);
        } catch (RejectedExecutionException closed) {
            // the store closed meanwhile
        }
    }

    @Override
    public void close() {
        for (Breaker breaker : perPartition ? breakers : new Breaker[] {breakers[0]}) {
            breaker.close();
        }
        connector.shutdownNow();
        prober.shutdownNow();
    }
}
