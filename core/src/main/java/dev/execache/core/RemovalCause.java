package dev.execache.core;

import dev.execache.core.spi.Counter;
import java.util.Locale;

/** Why entries left the cache before a bound pushed them out: each cause has its own counter. */
public enum RemovalCause {
    /** A call that may have changed their server went through execache. */
    WRITE(Counter.INVALIDATED_BY_WRITE),
    /** A tool they depended on has a new version (or schema). */
    VERSION(Counter.INVALIDATED_BY_VERSION),
    /** A server said a resource they read was updated. */
    RESOURCE(Counter.INVALIDATED_BY_RESOURCE),
    /** A person or a program asked for it (invalidate, clear). */
    HAND(Counter.INVALIDATED_BY_HAND),
    /** Their time to live ran out (counted by the store as it purges them). */
    EXPIRY(Counter.EXPIRATIONS);

    private final Counter counter;

    RemovalCause(Counter counter) {
        this.counter = counter;
    }

    /** The counter that counts removals of this cause. */
    public Counter counter() {
        return counter;
    }

    /** Whether removals of this cause are invalidations (all but expiry). */
    public boolean isInvalidation() {
        return this != EXPIRY;
    }

    /** The cause as figures name it: {@code write}, {@code version}, {@code resource}, {@code hand}, {@code expiry}. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
