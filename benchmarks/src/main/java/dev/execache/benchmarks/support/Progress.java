package dev.execache.benchmarks.support;

import java.util.Locale;

/** One line on stderr per step, with the time since the report started, so a long run shows where it is. */
public final class Progress {
    private final long start = System.nanoTime();

    public void note(String message) {
        System.err.printf(Locale.ROOT, "[%5.1f s] %s%n", elapsedSeconds(), message);
    }

    public double elapsedSeconds() {
        return (System.nanoTime() - start) / 1e9;
    }
}
