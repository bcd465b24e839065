package dev.execache.core;

/**
 * A source of nanoseconds for measuring durations (how long a run took, how much a hit
 * saved), injected beside the {@link java.time.Clock} so tests can assert exact figures.
 */
@FunctionalInterface
public interface Ticker {
    Ticker SYSTEM = System::nanoTime;

    /** Nanoseconds from an arbitrary origin; only differences mean anything. */
    long read();
}
