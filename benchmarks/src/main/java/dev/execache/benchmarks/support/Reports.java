package dev.execache.benchmarks.support;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** What every report does around its figures: the parts its arguments choose, and how it prints them. */
public final class Reports {

    private Reports() {
    }

    /** The parts the arguments name, all when none; a part it does not have ends the program (exit 2). */
    public static Set<String> parts(String report, List<String> all, String[] args) {
        Set<String> parts = new LinkedHashSet<>(args.length == 0 ? all : List.of(args));
        if (!all.containsAll(parts)) {
            System.err.println("usage: " + report + " [" + String.join("|", all) + "]...");
            System.exit(2);
        }
        return parts;
    }

    /**
     * Prints the machine, its load average at the start and now (then {@code after}, a sentence
     * or nothing), and the table.
     */
    public static void print(String machine, String loadAtStart, String after, Table table) {
        System.out.println();
        System.out.println("Machine: " + machine);
        System.out.println("Load average (1, 5, 15 min): " + loadAtStart + " at the start, " + Machine.loadAverage()
                + " at the end." + (after.isEmpty() ? "" : " " + after));
        System.out.println();
        System.out.print(table.markdown());
    }
}
