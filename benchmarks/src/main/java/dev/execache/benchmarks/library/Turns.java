package dev.execache.benchmarks.library;

import java.util.List;
import java.util.SplittableRandom;

/** Calls measured in turns, call by call, so that drift in the machine's speed falls on all of them alike. */
final class Turns {

    private Turns() {
    }

    /** One call measured, given the key it reads (which it may ignore). */
    @FunctionalInterface
    interface KeyedCall {
        void run(String key) throws Exception;
    }

    /**
     * Rounds of calls on random keys, {@code v1:} and 64 hex digits of {@code 0} to {@code keys - 1};
     * within a round each call takes its turn at each key, in a rotating order. Returns the
     * nanoseconds of every call, one row per call.
     */
    static long[][] alternate(List<KeyedCall> calls, int keys, int rounds, int callsPerRound) throws Exception {
        SplittableRandom random = new SplittableRandom(42);
        long[][] nanos = new long[calls.size()][rounds * callsPerRound];
        for (int round = 0; round < rounds; round++) {
            for (int i = 0; i < callsPerRound; i++) {
                String key = key(random.nextInt(keys));
                int sample = round * callsPerRound + i;
                for (int turn = 0; turn < calls.size(); turn++) {
                    int which = (sample + turn) % calls.size();
                    long start = System.nanoTime();
                    calls.get(which).run(key);
                    nanos[which][sample] = System.nanoTime() - start;
                }
            }
        }
        return nanos;
    }

    /** The key of the entry {@code index}. */
    static String key(int index) {
        return "v1:" + "%064x".formatted(index);
    }
}
