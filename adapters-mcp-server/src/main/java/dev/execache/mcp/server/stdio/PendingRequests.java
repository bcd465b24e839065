package dev.execache.mcp.server.stdio;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The stdio session's requests read and not answered yet, by id ({@link dev.execache.gateway.InFlightCalls#key}), with
 * their methods; and those dropped (cancelled, or answered already because the server is
 * stopping), whose answers must not be written when their computation ends. At the end of input
 * the session waits for the rest to be answered.
 */
final class PendingRequests {
    private static final System.Logger LOG = System.getLogger("dev.execache.mcp.server");

    private final Map<Object, String> unanswered = new ConcurrentHashMap<>();
    private final Set<Object> dropped = ConcurrentHashMap.newKeySet();

    void add(Object key, String method) {
        unanswered.put(key, method);
    }

    /** The method of an unanswered request; null when it was answered, or never read. */
    String method(Object key) {
        return unanswered.get(key);
    }

    Map<Object, String> unanswered() {
        return Map.copyOf(unanswered);
    }

    /** Drops a request, answered or not: whatever computes it is not to answer it. */
    void drop(Object key) {
        dropped.add(key);
        if (unanswered.remove(key) != null) {
            wake();
        }
    }

    /** Takes an unanswered request to answer it now, and drops it; false when it is answered already. */
    boolean claim(Object key) {
        if (unanswered.remove(key) == null) {
            return false;
        }
        dropped.add(key);
        wake();
        return true;
    }

    /** Whether the request was dropped (its answer is then not written); forgets it. */
    boolean takeDropped(Object key) {
        return dropped.remove(key);
    }

    /** The request is answered. */
    void answered(Object key) {
        if (unanswered.remove(key) != null) {
            wake();
        }
    }

    /** Tells {@link #awaitAnswers} to look again. */
    void wake() {
        synchronized (unanswered) {
            unanswered.notifyAll();
        }
    }

    /** At the end of input: waits until every request read is answered or dropped, at most {@code limit}. */
    void awaitAnswers(Duration limit) {
        if (!awaitAnswered(limit)) {
            LOG.log(Level.WARNING, "input ended; gave up waiting for " + unanswered.size() + " unanswered requests");
        }
    }

    /** Waits until no request read is unanswered, at most {@code limit}; returns whether none is. */
    boolean awaitAnswered(Duration limit) {
        long deadline = System.nanoTime() + limit.toNanos();
        synchronized (unanswered) {
            while (!unanswered.isEmpty() && System.nanoTime() < deadline) {
                try {
                    unanswered.wait(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return unanswered.isEmpty();
                }
            }
            return unanswered.isEmpty();
        }
    }
}
