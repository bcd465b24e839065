package dev.execache.gateway;

import dev.execache.core.spi.CatalogTool;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;

/**
 * A ranked search over the servers' tools, Okapi BM25 over each tool's name (weighted three times), title (twice),
 * description, server name and parameters' names and descriptions. Built once per change of the tools (see
 * {@link Gateway#toolSearch}); a query reads posting lists only, so thousands of tools cost a query little.
 *
 * <p>Written here rather than taken from a library: the gateway module may depend on core, the MCP SDK's schema and
 * Jackson only (ArchitectureTest), and Lucene, the one library that does this well, would bring megabytes and an
 * index on disk for a list of a few thousand short documents that fits in a few hash maps.
 */
final class ToolSearch {
    /** BM25's usual constants: term frequency saturation and length normalization. */
    static final double K1 = 1.2;
    static final double B = 0.75;
    private static final int NAME_WEIGHT = 3;
    private static final int TITLE_WEIGHT = 2;

    private final List<CatalogTool> tools;
    private final int[] lengths;
    private final double averageLength;
    /** Per term, the tools that hold it and how often: parallel arrays of tool index and frequency. */
    private final Map<String, int[][]> postings;

    /** A match and its score, best first in {@link #search}. */
    record Match(CatalogTool tool, double score) {
    }

    private ToolSearch(List<CatalogTool> tools) {
        this.tools = List.copyOf(tools);
        this.lengths = new int[tools.size()];
        Map<String, List<int[]>> building = new HashMap<>();
        long total = 0;
        for (int i = 0; i < tools.size(); i++) {
            Map<String, Integer> frequencies = new HashMap<>();
            int length = 0;
            for (String term : terms(tools.get(i))) {
                frequencies.merge(term, 1, Integer::sum);
                length++;
            }
            lengths[i] = length;
            total += length;
            int tool = i;
            frequencies.forEach((term, count) -> building.computeIfAbsent(term, t -> new ArrayList<>())
                    .add(new int[] {tool, count}));
        }
        this.averageLength = tools.isEmpty() ? 1 : Math.max(1, (double) total / tools.size());
        this.postings = new HashMap<>();
        building.forEach((term, list) -> {
            int[][] arrays = new int[2][list.size()];
            for (int j = 0; j < list.size(); j++) {
                arrays[0][j] = list.get(j)[0];
                arrays[1][j] = list.get(j)[1];
            }
            postings.put(term, arrays);
        });
    }

    static ToolSearch of(Collection<CatalogTool> tools) {
        return new ToolSearch(new ArrayList<>(tools));
    }

    int size() {
        return tools.size();
    }

    /** The best {@code limit} matches of {@code query}, best first; ties in the order the tools were given. */
    List<Match> search(String query, int limit) {
        Set<String> terms = new LinkedHashSet<>(tokens(query));
        double[] scores = new double[tools.size()];
        boolean[] hit = new boolean[tools.size()];
        for (String term : terms) {
            int[][] posting = postings.get(term);
            if (posting == null) {
                continue;
            }
            int documents = posting[0].length;
            double idf = Math.log(1 + (tools.size() - documents + 0.5) / (documents + 0.5));
            for (int j = 0; j < documents; j++) {
                int tool = posting[0][j];
                int frequency = posting[1][j];
                double norm = K1 * (1 - B + B * lengths[tool] / averageLength);
                scores[tool] += idf * frequency * (K1 + 1) / (frequency + norm);
                hit[tool] = true;
            }
        }
        PriorityQueue<Integer> best = new PriorityQueue<>((a, b) -> scores[a] != scores[b]
                ? Double.compare(scores[a], scores[b]) : Integer.compare(b, a));
        for (int i = 0; i < tools.size(); i++) {
            if (!hit[i]) {
                continue;
            }
            best.add(i);
            if (best.size() > limit) {
                best.poll();
            }
        }
        List<Match> matches = new ArrayList<>();
        while (!best.isEmpty()) {
            int i = best.poll();
            matches.add(0, new Match(tools.get(i), scores[i]));
        }
        return matches;
    }

    /** A tool's terms as a document: its name and title weighted, then the rest once. */
    private static List<String> terms(CatalogTool tool) {
        Map<String, Object> definition = tool.definition();
        List<String> terms = new ArrayList<>();
        List<String> name = tokens(tool.serverToolName());
        for (int i = 0; i < NAME_WEIGHT; i++) {
            terms.addAll(name);
        }
        List<String> title = tokens(text(definition.get("title")));
        for (int i = 0; i < TITLE_WEIGHT; i++) {
            terms.addAll(title);
        }
        terms.addAll(tokens(tool.server()));
        terms.addAll(tokens(text(definition.get("description"))));
        if (definition.get("inputSchema") instanceof Map<?, ?> schema
                && schema.get("properties") instanceof Map<?, ?> properties) {
            properties.forEach((parameter, property) -> {
                terms.addAll(tokens(String.valueOf(parameter)));
                if (property instanceof Map<?, ?> described) {
                    terms.addAll(tokens(text(described.get("description"))));
                }
            });
        }
        return terms;
    }

    private static String text(Object value) {
        return value instanceof String text ? text : "";
    }

    /**
     * Words of {@code text}, lowercase: split at anything but letters and digits and at camelCase humps
     * ({@code listPullRequests}, {@code HTTPServer}), plurals made singular ({@code issues} -> {@code issue},
     * {@code repositories} -> {@code repository}).
     */
    static List<String> tokens(String text) {
        List<String> tokens = new ArrayList<>();
        if (text == null) {
            return tokens;
        }
        StringBuilder word = new StringBuilder();
        int length = text.length();
        for (int i = 0; i < length; i++) {
            char c = text.charAt(i);
            if (!Character.isLetterOrDigit(c)) {
                flush(word, tokens);
                continue;
            }
            if (!word.isEmpty()) {
                char previous = text.charAt(i - 1);
                boolean hump = Character.isUpperCase(c) && (Character.isLowerCase(previous) || Character.isDigit(previous)
                        || (Character.isUpperCase(previous) && startsWord(text, i + 1)));
                if (hump) {
                    flush(word, tokens);
                }
            }
            word.append(c);
        }
        flush(word, tokens);
        return tokens;
    }

    /**
     * Whether lowercase letters follow at {@code at} that begin a word ({@code HTTPServer}: "erver"), not the plural
     * s of an acronym ({@code URLs}).
     */
    private static boolean startsWord(String text, int at) {
        if (at >= text.length() || !Character.isLowerCase(text.charAt(at))) {
            return false;
        }
        boolean pluralS = text.charAt(at) == 's' && (at + 1 >= text.length() || !Character.isLetterOrDigit(text.charAt(at + 1)));
        return !pluralS;
    }

    private static void flush(StringBuilder word, List<String> tokens) {
        if (!word.isEmpty()) {
            tokens.add(stem(word.toString().toLowerCase(Locale.ROOT)));
            word.setLength(0);
        }
    }

    /** Plurals only: light enough never to merge words that differ in meaning. */
    static String stem(String word) {
        if (word.length() > 4 && word.endsWith("ies")) {
            return word.substring(0, word.length() - 3) + "y";
        }
        if (word.length() > 4 && (word.endsWith("sses") || word.endsWith("xes") || word.endsWith("ches")
                || word.endsWith("shes"))) {
            return word.substring(0, word.length() - 2);
        }
        if (word.length() > 3 && word.endsWith("s") && !word.endsWith("ss") && !word.endsWith("us")
                && !word.endsWith("is")) {
            return word.substring(0, word.length() - 1);
        }
        return word;
    }
}
