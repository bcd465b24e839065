package dev.execache.benchmarks.support;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The report: one row per figure, each beside the baseline measured in the same run, printed
 * as a Markdown table so that it reads in a terminal and pastes into the README as it is.
 */
public final class Table {
    private final String[] header;
    private final List<String[]> rows = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();

    public Table() {
        this("figure", "measured", "baseline (same run)", "ratio", "aim");
    }

    public Table(String... header) {
        this.header = header.clone();
    }

    /** One row, a cell for each column of the header. */
    public void add(String... cells) {
        if (cells.length != header.length) {
            throw new IllegalArgumentException(cells.length + " cells for " + header.length + " columns");
        }
        rows.add(cells.clone());
    }

    /** A line printed under the table: how a figure was made. */
    public void note(String note) {
        notes.add(note);
    }

    public static String millis(double millis) {
        if (millis >= 10_000) {
            return String.format(Locale.ROOT, "%.1f s", millis / 1000);
        }
        if (millis >= 1_000) {
            return String.format(Locale.ROOT, "%.2f s", millis / 1000);
        }
        if (millis >= 100) {
            return String.format(Locale.ROOT, "%.0f ms", millis);
        }
        if (millis >= 1) {
            return String.format(Locale.ROOT, "%.1f ms", millis);
        }
        return micros(millis * 1000);
    }

    public static String micros(double micros) {
        if (micros >= 10) {
            return String.format(Locale.ROOT, "%.1f µs", micros);
        }
        if (micros >= 1) {
            return String.format(Locale.ROOT, "%.2f µs", micros);
        }
        return String.format(Locale.ROOT, "%.1f ns", micros * 1000);
    }

    /** {@code numerator / denominator} as {@code 6.45x}, or {@code 34x} from ten up. */
    public static String times(double numerator, double denominator) {
        double ratio = numerator / denominator;
        return String.format(Locale.ROOT, ratio >= 10 ? "%.0fx" : "%.2fx", ratio);
    }

    public static String percent(double fraction) {
        return String.format(Locale.ROOT, "%.0f%%", fraction * 100);
    }

    public static String aim(String aim, boolean met) {
        return aim + (met ? ": met" : ": **not met**");
    }

    public String markdown() {
        int[] widths = new int[header.length];
        List<String[]> all = new ArrayList<>();
        all.add(header);
        all.addAll(rows);
        for (String[] row : all) {
            for (int i = 0; i < row.length; i++) {
                widths[i] = Math.max(widths[i], row[i].length());
            }
        }
        StringBuilder out = new StringBuilder();
        appendRow(out, header, widths);
        String[] rule = new String[header.length];
        for (int i = 0; i < rule.length; i++) {
            rule[i] = "-".repeat(widths[i]);
        }
        appendRow(out, rule, widths);
        for (String[] row : rows) {
            appendRow(out, row, widths);
        }
        if (!notes.isEmpty()) {
            out.append(System.lineSeparator());
            notes.forEach(note -> out.append("- ").append(note).append(System.lineSeparator()));
        }
        return out.toString();
    }

    private static void appendRow(StringBuilder out, String[] row, int[] widths) {
        out.append('|');
        for (int i = 0; i < row.length; i++) {
            out.append(' ').append(row[i]).append(" ".repeat(widths[i] - row[i].length())).append(" |");
        }
        out.append(System.lineSeparator());
    }
}
