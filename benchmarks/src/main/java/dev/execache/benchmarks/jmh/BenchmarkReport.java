package dev.execache.benchmarks.jmh;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * Runs the JMH benchmarks and prints each figure beside its baseline, measured in the same
 * run, as a ratio. Arguments: an optional regex of benchmarks to run (default: all).
 */
public final class BenchmarkReport {

    private BenchmarkReport() {
    }

    public static void main(String[] args) throws RunnerException {
        String include = args.length > 0 ? args[0] : HitPathBenchmark.class.getSimpleName();
        Options options = new OptionsBuilder().include(include).build();
        Collection<RunResult> results = new Runner(options).run();
        printHitPathTable(results);
    }

    static void printHitPathTable(Collection<RunResult> results) {
        Map<String, Map<String, Double>> byParam = new LinkedHashMap<>();
        for (RunResult result : results) {
            String benchmark = result.getParams().getBenchmark();
            String name = benchmark.substring(benchmark.lastIndexOf('.') + 1);
            String param = result.getParams().getParam("codeBytes");
            byParam.computeIfAbsent(param, p -> new LinkedHashMap<>()).put(name, result.getPrimaryResult().getScore());
        }
        List<String> lines = new ArrayList<>();
        lines.add(String.format(Locale.ROOT, "%-10s %16s %16s %16s %16s %12s %12s",
                "code", "execache hit", "store get", "CHM.get", "Caffeine", "hit vs CHM", "get vs CHM"));
        byParam.forEach((param, scores) -> {
            double hit = scores.getOrDefault("execacheHit", Double.NaN);
            double get = scores.getOrDefault("memoryStoreGet", Double.NaN);
            double chm = scores.getOrDefault("concurrentHashMapGet", Double.NaN);
            double caffeine = scores.getOrDefault("caffeineGetIfPresent", Double.NaN);
            lines.add(String.format(Locale.ROOT, "%-10s %13.2f µs %13.3f µs %13.3f µs %13.3f µs %11.0fx %11.0fx",
                    param + " B", hit / 1000, get / 1000, chm / 1000, caffeine / 1000, hit / chm, get / chm));
        });
        System.out.println();
        System.out.println("Hit path (average time per operation, one JMH run):");
        lines.forEach(System.out::println);
    }
}
