package dev.execache.benchmarks.support;

import java.util.Arrays;
import java.util.List;

/** Medians of measured times. */
public final class Samples {

    private Samples() {
    }

    public static double median(List<Double> values) {
        return median(values.stream().mapToDouble(Double::doubleValue).toArray());
    }

    public static double median(double[] values) {
        if (values.length == 0) {
            throw new IllegalArgumentException("no samples");
        }
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int middle = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
    }

    public static double medianMicros(long[] nanos) {
        return median(Arrays.stream(nanos).asDoubleStream().toArray()) / 1_000;
    }

    public static double millisSince(long startNanos) {
        return (System.nanoTime() - startNanos) / 1e6;
    }
}
