package dev.execache.cli.output;

import java.util.Collection;
import java.util.List;

/** The names nearest a mistyped one, for "did you mean": one or two letters off (swapped, missing, extra, wrong). */
public final class NearestNames {
    private static final int MOST_EDITS = 2;

    private NearestNames() {
    }

    /** The names fewest edits from {@code given}, when that is at most two; none otherwise. */
    public static List<String> of(String given, Collection<String> names) {
        int least = names.stream().mapToInt(name -> distance(given, name)).min().orElse(Integer.MAX_VALUE);
        return least > MOST_EDITS ? List.of()
                : names.stream().filter(name -> distance(given, name) == least).distinct().sorted().toList();
    }

    /** {@code ; did you mean serve or server?} for these names, nothing for none. */
    public static String didYouMean(List<String> names) {
        return names.isEmpty() ? "" : "; did you mean " + String.join(" or ", names) + "?";
    }

    /** Edits between two words, a swap of neighbours counting one (optimal string alignment). */
    static int distance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            for (int j = 0; j <= b.length(); j++) {
                if (i == 0 || j == 0) {
                    d[i][j] = i + j;
                    continue;
                }
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][b.length()];
    }
}
