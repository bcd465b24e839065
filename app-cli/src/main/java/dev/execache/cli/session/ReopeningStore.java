package dev.execache.cli.session;

import dev.execache.core.spi.CacheStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Supplier;

/**
 * Stands in for a store that could not be opened. Every call fails with the reason, so the
 * policy runs uncached and says why, once; at most every {@code retryEvery} a call tries to
 * open the store again, so a long-running server picks up a Redis that was down when it
 * started.
 */
public final class ReopeningStore extends DelegatingStore {
    private final Supplier<CacheStore> opener;
    private final Clock clock;
    private final Duration retryEvery;
    private CacheStore store;
    private String problem;
    private Instant lastAttempt;

    public ReopeningStore(Supplier<CacheStore> opener, String problem, Clock clock, Duration retryEvery) {
        this.opener = opener;
        this.problem = problem;
        this.clock = clock;
        this.retryEvery = retryEvery;
        this.lastAttempt = clock.instant();
    }

    /** A store that is never opened: every call fails with {@code reason}. */
    public static ReopeningStore never(String reason) {
        return new ReopeningStore(null, reason, Clock.systemUTC(), Duration.ZERO);
    }

    @Override
    synchronized CacheStore store() {
        if (store == null && opener != null && !clock.instant().isBefore(lastAttempt.plus(retryEvery))) {
            lastAttempt = clock.instant();
            try {
                store = opener.get();
            } catch (RuntimeException e) {
                problem = e.getMessage();
            }
        }
        if (store == null) {
            throw new IllegalStateException(problem);
        }
        return store;
    }

    @Override
    public synchronized void close() {
        if (store != null) {
            store.close();
        }
    }
}
