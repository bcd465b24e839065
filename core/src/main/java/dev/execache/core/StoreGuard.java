package dev.execache.core;

import java.lang.System.Logger.Level;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Calls the store so that its failure never fails a run: a failing call returns the
 * fallback, is counted, and is logged once per outage. Errors counted while the store was
 * down are added to its counter once it answers again.
 */
final class StoreGuard {
    private static final System.Logger LOG = System.getLogger("dev.execache.core");

    private final CacheStore store;
    private final AtomicBoolean down = new AtomicBoolean();
    private final AtomicLong unreportedErrors = new AtomicLong();

    StoreGuard(CacheStore store) {
        this.store = store;
    }

    CacheStore store() {
        return store;
    }

    <T> T call(String what, Supplier<T> action, T fallback) {
        try {
            T value = action.get();
            recovered();
            return value;
        } catch (RuntimeException e) {
            failed(what, e);
            return fallback;
        }
    }

    /** @return whether the action succeeded */
    boolean run(String what, Runnable action) {
        return call(what, () -> {
            action.run();
            return Boolean.TRUE;
        }, Boolean.FALSE);
    }

    boolean isDown() {
        return down.get();
    }

    /** The store's counters plus errors it has not been told of yet; only local errors if it is down. */
    Map<Counter, Long> counters() {
        Map<Counter, Long> counters = call("read counters", store::counters, new EnumMap<>(Counter.class));
        Map<Counter, Long> merged = new EnumMap<>(Counter.class);
        for (Counter counter : Counter.values()) {
            merged.put(counter, counters.getOrDefault(counter, 0L));
        }
        merged.merge(Counter.STORE_ERRORS, unreportedErrors.get(), Long::sum);
        return merged;
    }

    private void failed(String what, RuntimeException e) {
        unreportedErrors.incrementAndGet();
        if (down.compareAndSet(false, true)) {
            LOG.log(Level.WARNING, "cache store failed to " + what + "; running uncached until it answers again: " + reason(e));
        }
    }

    /** The exception and its root cause: clients often wrap the useful part ("connection refused"). */
    static String reason(Throwable e) {
        String message = e.getMessage() == null ? e.toString() : e.getMessage();
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        if (root == e || (root.getMessage() != null && message.contains(root.getMessage()))) {
            return message;
        }
        return message + " (" + root + ")";
    }

    private void recovered() {
        if (down.get() && down.compareAndSet(true, false)) {
            long errors = unreportedErrors.getAndSet(0);
            LOG.log(Level.INFO, "cache store answers again after " + errors + " failed calls; caching resumed");
            try {
                store.increment(Counter.STORE_ERRORS, errors);
            } catch (RuntimeException e) {
                unreportedErrors.addAndGet(errors);
            }
        }
    }
}
