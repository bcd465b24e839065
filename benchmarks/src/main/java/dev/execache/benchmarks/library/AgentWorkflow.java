package dev.execache.benchmarks.library;

import dev.execache.core.ExecutionRequest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;

/**
 * The requests of a repetitive agent session: {@value #SCRIPTS} distinct scripts, each run at
 * least once, and {@value #REPEATS} more runs drawn with Zipf weights (exponent
 * {@value #ZIPF_EXPONENT}), so that a few scripts come back often and many run once. Some
 * scripts read a page number that changes between runs (a different result each time), some
 * get the same context with its keys in another order (the same result). Each script spends
 * between {@value #MIN_WORK_MILLIS} and {@value #MAX_WORK_MILLIS} ms (log-uniform) computing.
 * Everything comes from one seed.
 */
final class AgentWorkflow {
    static final int SCRIPTS = 40;
    static final int REPEATS = 160;
    static final double ZIPF_EXPONENT = 1.2;
    static final int MIN_WORK_MILLIS = 50;
    static final int MAX_WORK_MILLIS = 500;

    private final List<ExecutionRequest> requests;
    private final List<Integer> scriptOfRequest;
    private final int[] workMillis;

    private AgentWorkflow(List<ExecutionRequest> requests, List<Integer> scriptOfRequest, int[] workMillis) {
        this.requests = List.copyOf(requests);
        this.scriptOfRequest = List.copyOf(scriptOfRequest);
        this.workMillis = workMillis;
    }

    static AgentWorkflow generate(long seed) {
        Random random = new Random(seed);
        int[] workMillis = new int[SCRIPTS];
        for (int script = 0; script < SCRIPTS; script++) {
            double logWork = Math.log(MIN_WORK_MILLIS)
                    + random.nextDouble() * (Math.log(MAX_WORK_MILLIS) - Math.log(MIN_WORK_MILLIS));
            workMillis[script] = (int) Math.round(Math.exp(logWork));
        }
        double[] cumulative = new double[SCRIPTS];
        double total = 0;
        for (int rank = 0; rank < SCRIPTS; rank++) {
            total += 1 / Math.pow(rank + 1, ZIPF_EXPONENT);
            cumulative[rank] = total;
        }
        List<Integer> order = new ArrayList<>();
        for (int script = 0; script < SCRIPTS; script++) {
            order.add(script);
        }
        for (int i = 0; i < REPEATS; i++) {
            double draw = random.nextDouble() * total;
            int rank = 0;
            while (cumulative[rank] < draw) {
                rank++;
            }
            order.add(rank);
        }
        Collections.shuffle(order, random);
        List<ExecutionRequest> requests = new ArrayList<>();
        for (int script : order) {
            requests.add(ExecutionRequest.of(code(script, workMillis[script]), context(script, random)));
        }
        return new AgentWorkflow(requests, order, workMillis);
    }

    List<ExecutionRequest> requests() {
        return requests;
    }

    /** The total time the scripts compute, over every request. */
    long totalWorkMillis() {
        return scriptOfRequest.stream().mapToLong(script -> workMillis[script]).sum();
    }

    String describe() {
        int[] runs = new int[SCRIPTS];
        scriptOfRequest.forEach(script -> runs[script]++);
        int once = 0;
        for (int count : runs) {
            once += count == 1 ? 1 : 0;
        }
        int[] sorted = runs.clone();
        Arrays.sort(sorted);
        return String.format(Locale.ROOT,
                "%d requests over %d scripts (each once, %d more drawn with Zipf weights, exponent %.1f): "
                        + "the top three run %d, %d and %d times, %d run once; a quarter read a page number "
                        + "that changes, a quarter get their context's keys in shuffled order; each does %d–%d ms "
                        + "of arithmetic (log-uniform, timed by Date.now()), %.1f s in all",
                requests.size(), SCRIPTS, REPEATS, ZIPF_EXPONENT, sorted[SCRIPTS - 1], sorted[SCRIPTS - 2], sorted[SCRIPTS - 3],
                once, MIN_WORK_MILLIS, MAX_WORK_MILLIS, totalWorkMillis() / 1000.0);
    }

    /**
     * Work timed by the wall clock, so that a script costs the same time however loaded the
     * machine is, and runs with and without the cache stay comparable.
     */
    static String code(int script, int millis) {
        return """
                // script %1$d: %2$d ms of arithmetic, as an agent's data shaping would take
                const until = Date.now() + %2$d;
                let state = %1$d;
                let rounds = 0;
                while (Date.now() < until) {
                  for (let i = 0; i < 20000; i++) state = (Math.imul(state, 1103515245) + 12345 + i) | 0;
                  rounds++;
                }
                return { script: %1$d, input: context, computed: rounds > 0 };
                """.formatted(script, millis);
    }

    private static Object context(int script, Random random) {
        return switch (script % 4) {
            case 1 -> Map.of("page", random.nextInt(3), "limit", 20);
            case 2 -> {
                List<String> keys = new ArrayList<>(List.of("limit", "sort", "filter"));
                Collections.shuffle(keys, random);
                Map<String, Object> reordered = new LinkedHashMap<>();
                for (String key : keys) {
                    reordered.put(key, switch (key) {
                        case "limit" -> 10;
                        case "sort" -> "-amount";
                        default -> Map.of("status", "paid");
                    });
                }
                yield reordered;
            }
            default -> Map.of("limit", 10);
        };
    }
}
