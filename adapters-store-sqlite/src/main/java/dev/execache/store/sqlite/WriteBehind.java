package dev.execache.store.sqlite;

import dev.execache.core.spi.CacheEntry;
import dev.execache.core.spi.Counter;
import dev.execache.core.spi.StoreCounters;
import dev.execache.store.sqlite.Unwritten.PendingUse;
import java.time.Clock;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.StampedLock;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.HandleCallback;
import org.jdbi.v3.core.statement.PreparedBatch;

/**
 * What reads note (a hit's count and recency, an expired entry met) and what is counted, kept in
 * memory as {@link Unwritten} so that no read waits for a write, and written into the file by the
 * store's next write, or in the background once due: {@value #MAX_PENDING_USES} entries used, the
 * oldest {@value #MAX_PENDING_MILLIS} ms old, or an expired entry met; and at close. A read adds
 * what is unwritten to what it read from the file ({@link #withUnwritten}); until it is written,
 * other processes see the previous counts and recency.
 */
final class WriteBehind {
    static final int MAX_PENDING_USES = 64;
    static final long MAX_PENDING_MILLIS = 1_000;

    private static final String RECORD_USE = """
            UPDATE cache_entries SET hit_count = hit_count + ?, last_access = ?
             WHERE cache_key = ? AND created_at = ?""";

    private final OpenFile file;
    private final Clock clock;
    /** Guards {@link #unwritten}, {@link #inFlight} and {@link #countedAgents}; held only for a few map operations. */
    private final Object lock = new Object();
    private Unwritten unwritten = new Unwritten();
    /** What the write under way took from {@link #unwritten}: still added to what reads find until it commits. */
    private Unwritten inFlight = Unwritten.NONE;
    /** The agents counted in the file or unwritten, as last read from the file; null: read it again. */
    private Set<String> countedAgents;
    /**
     * Write-locked only while a write commits and {@link #inFlight} is let go: a read that adds
     * what is unwritten to what it read from the file checks that no commit came between the two
     * (optimistically, without waiting), so that nothing is counted twice or missed.
     */
    private final StampedLock commits = new StampedLock();
    /**
     * Writes what is unwritten when it is due, and checks again when what is not due yet will be
     * (see {@link #writeIfDue}). Its one thread ends after a few idle seconds (none while a check
     * is pending), so that a store nobody closed keeps none.
     */
    private final ScheduledThreadPoolExecutor background = backgroundExecutor();
    private final AtomicBoolean queued = new AtomicBoolean();
    /** A check of {@link #writeIfDue} is scheduled for when the oldest unwritten use is due. */
    private final AtomicBoolean dueCheckScheduled = new AtomicBoolean();
    /** A write in the background that failed, told to the next count (a count is a write). */
    private final AtomicReference<RuntimeException> failure = new AtomicReference<>();

    WriteBehind(OpenFile file, Clock clock) {
        this.file = file;
        this.clock = clock;
    }

    /**
     * Runs {@code work} in a write transaction that first writes what is unwritten; what it took
     * stays added to what reads find until the transaction commits, and goes back to be written
     * later if it does not.
     */
    <R> R write(HandleCallback<R, RuntimeException> work) {
        return file.write(jdbi -> {
            Unwritten taken;
            synchronized (lock) {
                taken = unwritten;
                unwritten = new Unwritten();
                inFlight = taken;
            }
            long now = clock.millis();
            long since = taken.isEmpty() ? now : taken.firstAt;
            try {
                return jdbi.withHandle(handle -> {
                    handle.begin();
                    boolean committed = false;
                    try {
                        SqliteCounters.startCounting(handle, since);
                        write(handle, taken, now);
                        R result = work.withHandle(handle);
                        long stamp = commits.writeLock();
                        try {
                            handle.commit();
                            committed = true;
                            synchronized (lock) {
                                inFlight = Unwritten.NONE;
                                countedAgents = null;
                            }
                        } finally {
                            commits.unlockWrite(stamp);
                        }
                        return result;
                    } finally {
                        if (!committed) {
                            rollBack(handle);
                        }
                    }
                });
            } catch (RuntimeException e) {
                synchronized (lock) {
                    unwritten = taken.followedBy(unwritten);
                    inFlight = Unwritten.NONE;
                }
                throw e;
            }
        });
    }

    private static void rollBack(Handle handle) {
        try {
            handle.rollback();
        } catch (RuntimeException e) {
            // what failed before is what the caller hears of
        }
    }

    /** Writes what reads noted: the uses of entries (hits, recency), the expired entries met, the counts. */
    private static void write(Handle handle, Unwritten taken, long now) {
        Map<String, Long> counts = new LinkedHashMap<>(taken.counts);
        if (!taken.expired.isEmpty()) {
            PreparedBatch expire = handle.prepareBatch(
                    "DELETE FROM cache_entries WHERE cache_key = ? AND created_at = ? AND expires_at <= ?");
            taken.expired.forEach((key, createdAt) -> expire.add(key, createdAt, now));
            int[] removed = expire.execute();
            // one that is gone already was removed, and counted, by a write of its own (another process's purge)
            long goneAlready = Arrays.stream(removed).filter(rows -> rows == 0).count();
            counts.merge(Counter.EXPIRATIONS.name(), -goneAlready, Long::sum);
        }
        if (!taken.uses.isEmpty()) {
            long lastAccess = handle.createQuery("SELECT coalesce(max(last_access), 0) FROM cache_entries")
                    .mapTo(Long.class)
                    .one();
            PreparedBatch uses = handle.prepareBatch(RECORD_USE);
            for (Map.Entry<String, PendingUse> use : taken.uses.entrySet()) {
                uses.add(use.getValue().hits(), ++lastAccess, use.getKey(), use.getValue().createdAt());
            }
            uses.execute();
        }
        SqliteCounters.addRows(handle, counts);
    }

    /**
     * Reads the file, then, holding the lock, gives what was read to {@code withUnwritten} to add
     * what is not written yet (with the methods below that say so), so long as no write committed
     * in between (which would make what it wrote count twice, or, let go from {@link #inFlight},
     * not at all); else reads again. Twice in a row a commit came between: the third read waits
     * for the commit to end.
     */
    <T, R> R withUnwritten(String what, Readers.Read<T> fromFile, Function<T, R> withUnwritten) {
        for (int attempt = 0; ; attempt++) {
            boolean waits = attempt >= 2;
            long stamp = waits ? commits.readLock() : commits.tryOptimisticRead();
            try {
                T stored = file.read(what, fromFile);
                synchronized (lock) {
                    if (waits || stamp != 0 && commits.validate(stamp)) {
                        return withUnwritten.apply(stored);
                    }
                }
            } finally {
                if (waits) {
                    commits.unlockRead(stamp);
                }
            }
        }
    }

    /**
     * Inside {@link #withUnwritten}: {@code stored}, read from the file, unless it expired, with the
     * hits not yet written added, and this use noted when {@code use}. An expired one is noted, to
     * be removed (and counted) by the next write.
     */
    Optional<CacheEntry> met(CacheEntry stored, long now, boolean use) {
        assert Thread.holdsLock(lock);
        String key = stored.key();
        long createdAt = stored.createdAt().toEpochMilli();
        if (now >= stored.expiresAt().toEpochMilli()) {
            unwritten.uses.remove(key);
            if (!unwritten.expired.containsKey(key) && !inFlight.expired.containsKey(key)) {
                unwritten.noteFirst(now);
                unwritten.expired.put(key, createdAt);
                unwritten.counts.merge(Counter.EXPIRATIONS.name(), 1L, Long::sum);
            }
            return Optional.empty();
        }
        long hits = stored.hits() + inFlight.hits(key, createdAt) + unwritten.hits(key, createdAt);
        if (use) {
            unwritten.noteFirst(now);
            PendingUse earlier = unwritten.uses.remove(key);
            long used = earlier == null || earlier.createdAt() != createdAt ? 1 : earlier.hits() + 1;
            unwritten.uses.put(key, new PendingUse(createdAt, used));
            hits++;
        }
        return Optional.of(stored.withHits(hits));
    }

    /** Inside {@link #withUnwritten}: {@code stored} with the hits not yet written added. */
    CacheEntry withUnwrittenHits(CacheEntry stored) {
        assert Thread.holdsLock(lock);
        long createdAt = stored.createdAt().toEpochMilli();
        long unwrittenHits = inFlight.hits(stored.key(), createdAt) + unwritten.hits(stored.key(), createdAt);
        return unwrittenHits == 0 ? stored : stored.withHits(stored.hits() + unwrittenHits);
    }

    /** Inside {@link #withUnwritten}: the counter rows read, with the counts not yet written added. */
    Map<String, Long> withUnwrittenCounts(Map<String, Long> stored) {
        assert Thread.holdsLock(lock);
        Map<String, Long> counts = new HashMap<>(stored);
        inFlight.counts.forEach((name, delta) -> counts.merge(name, delta, Long::sum));
        unwritten.counts.forEach((name, delta) -> counts.merge(name, delta, Long::sum));
        return counts;
    }

    /** Inside {@link #withUnwritten}: when the oldest of what is not written yet was noted; empty if nothing is. */
    Optional<Long> firstNotedAt() {
        assert Thread.holdsLock(lock);
        Unwritten first = !inFlight.isEmpty() ? inFlight : unwritten;
        return first.isEmpty() ? Optional.empty() : Optional.of(first.firstAt);
    }

    /**
     * Notes counts, to the totals, to {@code tool}'s rows unless it is null, and to {@code agent}'s
     * unless it is null: an agent's are counted as {@link StoreCounters#OTHER_AGENT} past the cap,
     * given the agents counted in the file ({@code agentsInFile}, read only when not known since
     * the last commit, and outside the lock, which reads hold) and those not written yet.
     */
    void noteCounts(String tool, String agent, Map<Counter, Long> deltas, long now, Supplier<Set<String>> agentsInFile) {
        Set<String> inFile = null;
        while (true) {
            synchronized (lock) {
                if (agent == null || countedAgents != null || inFile != null) {
                    if (agent != null && countedAgents == null) {
                        countedAgents = inFile;
                        countedAgents.addAll(agentsIn(inFlight));
                        countedAgents.addAll(agentsIn(unwritten));
                    }
                    String countedAs = agent == null ? null : countedAs(agent);
                    deltas.forEach((counter, delta) -> {
                        if (delta != 0) {
                            unwritten.noteFirst(now);
                            unwritten.counts.merge(counter.name(), delta, Long::sum);
                            if (tool != null) {
                                unwritten.counts.merge(StoreCounters.toolRow(counter, tool), delta, Long::sum);
                            }
                            if (countedAs != null) {
                                unwritten.counts.merge(StoreCounters.agentRow(counter, countedAs), delta, Long::sum);
                            }
                        }
                    });
                    return;
                }
            }
            inFile = agentsInFile.get();
        }
    }

    private static List<String> agentsIn(Unwritten noted) {
        return noted.counts.keySet().stream().filter(row -> row.startsWith(StoreCounters.AGENT_ROW))
                .map(row -> StoreCounters.nameInRow(row, StoreCounters.AGENT_ROW)).toList();
    }

    /** The agent a count of {@code agent} goes to: itself, or {@code other} past the cap. Holding the lock. */
    private String countedAs(String agent) {
        String counted = StoreCounters.countedAs(countedAgents, agent);
        countedAgents.add(counted);
        return counted;
    }

    /** The uses of {@code key} not written yet go: the entry is replaced or removed. */
    void forgetUses(String key) {
        synchronized (lock) {
            unwritten.uses.remove(key);
        }
    }

    /** Every use not written yet goes: every entry is removed. */
    void forgetUses() {
        synchronized (lock) {
            unwritten.uses.clear();
        }
    }

    /** Everything not written yet goes, with the file it was noted for. */
    void forget() {
        synchronized (lock) {
            unwritten = new Unwritten();
            inFlight = Unwritten.NONE;
            countedAgents = null;
        }
    }

    /** For tests: a write has taken what was unwritten and not yet committed it. */
    boolean writeUnderWay() {
        synchronized (lock) {
            return inFlight != Unwritten.NONE;
        }
    }

    private boolean hasUnwritten() {
        synchronized (lock) {
            return !unwritten.isEmpty();
        }
    }

    /**
     * Hands the write of what is unwritten to the background thread once it is due: enough
     * entries used, the oldest old enough, or an expired entry met. The caller does not wait for it.
     */
    void writeIfDue(long now) {
        boolean due;
        long untilDue;
        synchronized (lock) {
            due = unwritten.uses.size() >= MAX_PENDING_USES || !unwritten.expired.isEmpty()
                    || !unwritten.isEmpty() && now - unwritten.firstAt >= MAX_PENDING_MILLIS;
            untilDue = unwritten.isEmpty() ? -1 : Math.max(1, unwritten.firstAt + MAX_PENDING_MILLIS - now);
        }
        if (due && queued.compareAndSet(false, true)) {
            try {
                background.execute(this::writeUnwritten);
            } catch (RejectedExecutionException closing) {
                queued.set(false);
            }
        } else if (!due && untilDue > 0 && dueCheckScheduled.compareAndSet(false, true)) {
            // Not due yet, and perhaps no read or write comes after this one (an idle process, or
            // uses noted while a write that took the earlier ones waited for another process's
            // lock): without this check they would stay unwritten, unseen by other processes,
            // until this store's next write or close. It asks the store's clock again, so it
            // writes nothing early; not due then (the clock lags the timer), it checks again.
            try {
                background.schedule(() -> {
                    dueCheckScheduled.set(false);
                    writeIfDue(clock.millis());
                }, untilDue, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException closing) {
                dueCheckScheduled.set(false);
            }
        }
    }

    /** Throws, once, what a write in the background failed with: a count is a write, and hears of it. */
    void throwBackgroundFailure() {
        RuntimeException failed = failure.getAndSet(null);
        if (failed != null) {
            throw failed;
        }
    }

    private static ScheduledThreadPoolExecutor backgroundExecutor() {
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, work -> {
            Thread thread = new Thread(work, "execache-sqlite-write-behind");
            thread.setDaemon(true);
            return thread;
        });
        executor.setKeepAliveTime(5, TimeUnit.SECONDS);
        executor.allowCoreThreadTimeOut(true);
        // close writes what is unwritten itself: a pending check would only keep the thread
        executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        return executor;
    }

    private void writeUnwritten() {
        queued.set(false);
        try {
            file.writeIfOpen(() -> {
                if (hasUnwritten()) {
                    write(handle -> null);
                }
            });
        } catch (RuntimeException e) {
            failure.set(e);
        }
    }

    /** Writes what is unwritten and closes the file; closing twice does nothing. */
    void close() {
        background.shutdown();
        file.close(() -> {
            if (hasUnwritten()) {
                write(handle -> null);
            }
        });
    }
}
