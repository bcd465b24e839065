package dev.execache.gateway;

import dev.execache.core.spi.CatalogTool;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * A ranked search over the servers' tools: Okapi BM25F, each field's words counted with a weight, over a tool's name
 * and title (weighted most), its description and the lines of its server's instructions that name it, its server's name,
 * and the words of its parameters (names and descriptions, nested ones too; weighted least). Words are split at
 * snake_case, kebab-case and camelCase, lowercased, stripped of a few English endings ({@link #stem}), and common
 * words that say nothing of a tool ("the", "what", "me") are left out. A query's words also match their synonyms in
 * {@link #SYNONYMS}, at half weight: a person asks to "remember" or "forget" what a server calls creating and deleting
 * entities. Built once per change of the tools (see {@link Gateway#toolSearch}); a query reads posting lists only, so
 * thousands of tools cost a query little.
 *
 * <p>Written here rather than taken from a library: the gateway module may depend on core, the MCP SDK's schema and
 * Jackson only (ArchitectureTest), and Lucene, the one library that does this well, would bring megabytes (its
 * analyzers and core) and an index on disk for a list of a few thousand short documents that fits in a few hash maps.
 */
final class ToolSearch {
    /** BM25's usual constants: term frequency saturation and length normalization. */
    static final double K1 = 1.2;
    static final double B = 0.75;
    private static final double NAME_WEIGHT = 3;
    private static final double TITLE_WEIGHT = 2;
    private static final double DESCRIPTION_WEIGHT = 1;
    private static final double SERVER_WEIGHT = 1;
    private static final double PARAMETER_WEIGHT = 0.5;
    /** How much a synonym of a query's word counts beside the word itself. */
    private static final double SYNONYM_WEIGHT = 0.5;

    /**
     * Words that say nothing of what a tool does: English function words (Lucene's English stop set), pronouns and the
     * words a request is framed with.
     */
    private static final Set<String> STOP_WORDS = Set.of("a", "an", "and", "are", "as", "at", "be", "but", "by", "for",
            "if", "in", "into", "is", "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there",
            "these", "they", "this", "to", "was", "will", "with", "i", "me", "my", "you", "your", "we", "our", "its",
            "what", "which", "who", "how", "do", "does", "did", "can", "could", "would", "should", "please", "want",
            "need", "let", "from", "about", "some", "so", "up", "here", "now");

    /**
     * Groups of words that name one thing or one operation in the words tools are described with and the words people
     * ask with: the usual verbs of reading, writing, changing and removing, files and folders, common abbreviations,
     * and the vocabulary of a knowledge graph (memory, entity, relation, observation). General English, not any one
     * server's names; each word is in its stemmed form once built.
     */
    private static final List<List<String>> SYNONYM_GROUPS = List.of(
            List.of("read", "get", "fetch", "retrieve", "show", "view", "open", "load", "display"),
            List.of("write", "save", "store", "put", "persist"),
            List.of("create", "add", "new", "make", "insert"),
            List.of("delete", "remove", "drop", "erase", "destroy", "forget", "purge"),
            List.of("update", "edit", "change", "modify", "alter", "patch"),
            List.of("search", "find", "lookup", "look", "query", "locate"),
            List.of("file", "document"),
            List.of("directory", "folder", "dir"),
            List.of("move", "rename", "relocate"),
            List.of("tree", "hierarchy", "nested", "recursive"),
            List.of("image", "picture", "photo", "img"),
            List.of("memory", "remember", "recall", "knowledge", "know"),
            List.of("entity", "node", "thing"),
            List.of("relation", "relationship", "link", "connection", "connect", "edge"),
            List.of("observation", "fact", "detail"),
            List.of("sum", "add", "plus", "total"),
            List.of("wait", "sleep", "delay", "pause"),
            List.of("error", "fail", "failure"),
            List.of("cancel", "abort", "stop"),
            List.of("zip", "gzip", "compress", "archive"),
            List.of("environment", "env"),
            List.of("configuration", "config", "setting"),
            List.of("information", "info", "metadata"),
            List.of("repository", "repo"),
            List.of("message", "msg"));
    /** By stemmed word, its synonyms (stemmed): built from {@link #SYNONYM_GROUPS}. */
    static final Map<String, Set<String>> SYNONYMS = synonyms();

    private final List<CatalogTool> tools;
    private final double[] lengths;
    private final double averageLength;
    /** Per term, the tools that hold it and its weighted frequency in each: parallel arrays. */
    private final Map<String, Posting> postings;

    /** A match and its score, best first in {@link #search}. */
    record Match(CatalogTool tool, double score) {
    }

    private record Posting(int[] tools, double[] frequencies) {
    }

    private ToolSearch(List<CatalogTool> tools, Map<String, String> instructions) {
        this.tools = List.copyOf(tools);
        this.lengths = new double[tools.size()];
        Map<String, List<Map.Entry<Integer, Double>>> building = new HashMap<>();
        double total = 0;
        for (int i = 0; i < tools.size(); i++) {
            Map<String, Double> frequencies = new HashMap<>();
            double length = document(tools.get(i), instructions.get(tools.get(i).server()), frequencies);
            lengths[i] = length;
            total += length;
            int tool = i;
            frequencies.forEach((term, frequency) -> building.computeIfAbsent(term, t -> new ArrayList<>())
                    .add(Map.entry(tool, frequency)));
        }
        this.averageLength = tools.isEmpty() ? 1 : Math.max(1, total / tools.size());
        this.postings = new HashMap<>();
        building.forEach((term, list) -> {
            int[] holders = new int[list.size()];
            double[] frequencies = new double[list.size()];
            for (int j = 0; j < list.size(); j++) {
                holders[j] = list.get(j).getKey();
                frequencies[j] = list.get(j).getValue();
            }
            postings.put(term, new Posting(holders, frequencies));
        });
    }

    static ToolSearch of(Collection<CatalogTool> tools) {
        return of(tools, Map.of());
    }

    /** @param instructions what each server said of itself when it connected, by server name */
    static ToolSearch of(Collection<CatalogTool> tools, Map<String, String> instructions) {
        return new ToolSearch(new ArrayList<>(tools), instructions);
    }

    int size() {
        return tools.size();
    }

    /** The best {@code limit} matches of {@code query}, best first; ties in the order the tools were given. */
    List<Match> search(String query, int limit) {
        double[] scores = new double[tools.size()];
        boolean[] hit = new boolean[tools.size()];
        queryTerms(query).forEach((term, weight) -> {
            Posting posting = postings.get(term);
            if (posting == null) {
                return;
            }
            int documents = posting.tools().length;
            double idf = Math.log(1 + (tools.size() - documents + 0.5) / (documents + 0.5));
            for (int j = 0; j < documents; j++) {
                int tool = posting.tools()[j];
                double frequency = posting.frequencies()[j];
                double norm = K1 * (1 - B + B * lengths[tool] / averageLength);
                scores[tool] += weight * idf * frequency * (K1 + 1) / (frequency + norm);
                hit[tool] = true;
            }
        });
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

    /** A query's words, each weighing one, and their synonyms not among them, each weighing {@link #SYNONYM_WEIGHT}. */
    static Map<String, Double> queryTerms(String query) {
        Map<String, Double> terms = new LinkedHashMap<>();
        List<String> words = words(query);
        words.forEach(word -> terms.put(word, 1.0));
        for (String word : words) {
            for (String synonym : SYNONYMS.getOrDefault(word, Set.of())) {
                terms.putIfAbsent(synonym, SYNONYM_WEIGHT);
            }
        }
        return terms;
    }

    /**
     * Counts a tool's words into {@code frequencies}, each field's with its weight; returns the document's weighted
     * length.
     */
    private static double document(CatalogTool tool, String instructions, Map<String, Double> frequencies) {
        Map<String, Object> definition = tool.definition();
        double[] length = {0};
        BiConsumer<List<String>, Double> add = (words, weight) -> {
            words.forEach(word -> frequencies.merge(word, weight, Double::sum));
            length[0] += weight * words.size();
        };
        add.accept(words(tool.serverToolName()), NAME_WEIGHT);
        add.accept(words(text(definition.get("title"))), TITLE_WEIGHT);
        add.accept(words(text(definition.get("description"))), DESCRIPTION_WEIGHT);
        add.accept(words(tool.server()), SERVER_WEIGHT);
        if (definition.get("inputSchema") instanceof Map<?, ?> schema) {
            parameters(schema, words -> add.accept(words, PARAMETER_WEIGHT));
        }
        if (instructions != null) {
            String name = tool.serverToolName();
            // only what names the tool: words said of the whole server would be in every one of its tools, and a
            // word in most tools weighs nothing in BM25 ("The lab counts the calls": no more "count" in get_count)
            for (String line : instructions.split("\\R|(?<=[.!?])\\s+")) {
                if (mentions(line, name)) {
                    add.accept(words(line), DESCRIPTION_WEIGHT);
                }
            }
        }
        return length[0];
    }

    /** The names and descriptions of a schema's properties, and of the properties of its items and objects within. */
    private static void parameters(Map<?, ?> schema, Consumer<List<String>> add) {
        if (schema.get("properties") instanceof Map<?, ?> properties) {
            properties.forEach((parameter, property) -> {
                add.accept(words(String.valueOf(parameter)));
                if (property instanceof Map<?, ?> described) {
                    add.accept(words(text(described.get("description"))));
                    parameters(described, add);
                }
            });
        }
        if (schema.get("items") instanceof Map<?, ?> items) {
            add.accept(words(text(items.get("description"))));
            parameters(items, add);
        }
    }

    /** Whether the line names the tool as a word of its own (not as part of a longer name). */
    private static boolean mentions(String line, String name) {
        int at = line.indexOf(name);
        while (at >= 0) {
            int end = at + name.length();
            boolean before = at == 0 || !partOfName(line.charAt(at - 1));
            boolean after = end == line.length() || !partOfName(line.charAt(end));
            if (before && after) {
                return true;
            }
            at = line.indexOf(name, at + 1);
        }
        return false;
    }

    private static boolean partOfName(char c) {
        return Character.isLetterOrDigit(c) || c == '_' || c == '-';
    }

    private static String text(Object value) {
        return value instanceof String text ? text : "";
    }

    /** The words of {@code text} a search counts: its {@link #tokens} that are not {@link #STOP_WORDS}. */
    static List<String> words(String text) {
        List<String> words = new ArrayList<>();
        for (String token : split(text)) {
            if (!STOP_WORDS.contains(token)) {
                words.add(stem(token));
            }
        }
        return words;
    }

    /**
     * Words of {@code text}, lowercase and stemmed: split at anything but letters and digits and at camelCase humps
     * ({@code listPullRequests}, {@code HTTPServer}).
     */
    static List<String> tokens(String text) {
        return split(text).stream().map(ToolSearch::stem).toList();
    }

    private static List<String> split(String text) {
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
            tokens.add(word.toString().toLowerCase(Locale.ROOT));
            word.setLength(0);
        }
    }

    /**
     * A light English stemmer (after the first steps of Porter's): plurals made singular, then -ed and -ing taken off
     * where a vowel stays before them (a doubled last consonant undone: "logging", "log"), then a final e ("create",
     * "created", "creating" are all "creat"). Light enough never to merge words that differ in meaning, which
     * Porter's later steps do ("general", "generate"); the stems are only compared, never shown.
     */
    static String stem(String word) {
        String stem = singular(word);
        if (stem.length() > 5 && stem.endsWith("ied")) {
            stem = stem.substring(0, stem.length() - 3) + "y";
        } else if (stem.length() > 4 && stem.endsWith("ing") && hasVowel(stem, stem.length() - 3)) {
            stem = undoubled(stem.substring(0, stem.length() - 3));
        } else if (stem.length() > 3 && stem.endsWith("ed") && !stem.endsWith("eed") && hasVowel(stem, stem.length() - 2)) {
            stem = undoubled(stem.substring(0, stem.length() - 2));
        }
        if (stem.length() > 2 && stem.endsWith("e") && !stem.endsWith("ee")) {
            stem = stem.substring(0, stem.length() - 1);
        }
        return stem;
    }

    /** Plurals only: "issues", "repositories", "branches", "addresses"; not "status", "analysis", "address". */
    private static String singular(String word) {
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

    private static boolean hasVowel(String word, int before) {
        for (int i = 0; i < before; i++) {
            if ("aeiouy".indexOf(word.charAt(i)) >= 0) {
                return true;
            }
        }
        return false;
    }

    /** "logg" -> "log", "stopp" -> "stop"; not "call", "miss", "buzz", nor a short word such as "add". */
    private static String undoubled(String stem) {
        int n = stem.length();
        if (n >= 4 && stem.charAt(n - 1) == stem.charAt(n - 2) && "lszaeiouy".indexOf(stem.charAt(n - 1)) < 0) {
            return stem.substring(0, n - 1);
        }
        return stem;
    }

    private static Map<String, Set<String>> synonyms() {
        Map<String, Set<String>> synonyms = new HashMap<>();
        for (List<String> group : SYNONYM_GROUPS) {
            List<String> stems = group.stream().map(ToolSearch::stem).toList();
            for (String word : stems) {
                Set<String> others = synonyms.computeIfAbsent(word, w -> new LinkedHashSet<>());
                stems.stream().filter(other -> !other.equals(word)).forEach(others::add);
            }
        }
        // in the groups' order, so that a query's scores add up the same way in every run
        synonyms.replaceAll((word, others) -> Collections.unmodifiableSet(others));
        return Collections.unmodifiableMap(synonyms);
    }
}
