package dev.execache.gateway;

import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The tool calls {@code serve} is computing, by JSON-RPC request id, so that a
 * {@code notifications/cancelled} or a shutdown can stop one: its thread is interrupted, which
 * kills its Deno process (the sandbox ends a run whose caller is interrupted) and stores nothing.
 */
public final class InFlightCalls {
    private final ConcurrentHashMap<Object, Thread> running = new ConcurrentHashMap<>();
    private final Set<Object> cancelled = ConcurrentHashMap.newKeySet();

    /**
     * Runs {@code call} for request {@code id} on this thread.
     *
     * @throws CancellationException when the request was cancelled, before or while it ran
     */
    <T> T run(Object id, Supplier<T> call) {
        if (id == null) {
            return call.get();
        }
        Object key = key(id);
        running.put(key, Thread.currentThread());
        try {
            if (cancelled.contains(key)) {
                throw new CancellationException("cancelled before it started");
            }
            return call.get();
        } finally {
            running.remove(key);
            cancelled.remove(key);
            // an interrupt meant for this call must not reach the next task of this pooled thread
            Thread.interrupted();
        }
    }

    /** Stops the call if it runs; a call that has not started yet will not run. */
    public void cancel(Object id) {
        Object key = key(id);
        cancelled.add(key);
        Thread thread = running.get(key);
        if (thread != null) {
            thread.interrupt();
        }
    }

    public void cancelAll() {
        running.keySet().forEach(this::cancel);
    }

    public boolean isCancelled(Object id) {
        return id != null && cancelled.contains(key(id));
    }

    /** JSON-RPC ids are strings or integers; 1 and 1L are the same id. */
    public static Object key(Object id) {
        return id instanceof Number number ? (Object) number.longValue() : id;
    }
}
