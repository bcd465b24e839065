package dev.execache.core.spi;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;

/**
 * One stored result.
 *
 * @param key the cache key
 * @param value the result as JSON text
 * @param console console output captured with the result (empty for tool calls)
 * @param executionTime how long the original run took; a hit saves about this much
 * @param toolVersions the tools the result depended on, with the versions it was made with
 * @param createdAt when it was stored
 * @param expiresAt when it stops being returned
 * @param hits how many times it has been returned
 * @param label what a person recognises the entry by (a script's file name or first line, a tool
 *     call's name and short arguments); empty when unknown. Not part of the key.
 * @param checksum the CRC32C of the value and console as UTF-8, made when the result was
 *     stored and kept by the store beside it; a value damaged in storage fails {@link #isIntact()}
 */
public record CacheEntry(
        String key,
        String value,
        String console,
        Duration executionTime,
        Map<String, String> toolVersions,
        Instant createdAt,
        Instant expiresAt,
        long hits,
        String label,
        long checksum) {

    /**
     * Where an execution entry keeps the sources of non-determinism its code used (as the
     * comma-separated "version"): a reserved name among the tools it depended on, so every store
     * keeps it, and the fleet key signs it, without a change of their formats. No tool is named
     * so (a tool name never starts with {@code execache:}).
     */
    public static final String NONDETERMINISM = "execache:nondeterminism";

    /**
     * Where an execution entry keeps the bytes of tool answers its run consumed (as the decimal
     * "version"), the same way as {@link #NONDETERMINISM}: so that a hit can count again what the
     * run kept out of the agent's context.
     */
    public static final String TOOL_ANSWER_BYTES = "execache:tool-answer-bytes";
    /**
     * Where an execution entry keeps its run's trace (each tool call it made and the digest of the
     * answer it read, as text), the same way as {@link #NONDETERMINISM}: so that a stale run can be
     * revalidated by asking its calls again. {@code execache inspect} shows it.
     */
    public static final String TRACE = "execache:trace";
    /**
     * Where a tool answer kept for revalidation keeps the digest of its validator's answer (see
     * {@code ToolValidator}), the same way as {@link #NONDETERMINISM}.
     */
    public static final String VALIDATOR = "execache:validator";
    private static final String RESERVED_PREFIX = "execache:";

    /** The longest label kept; a longer one is cut, so a label never makes an entry big. */
    public static final int MAX_LABEL_LENGTH = 120;
    private static final Pattern CONTROL = Pattern.compile("\\p{Cntrl}+");

    public CacheEntry {
        requireText(key, "key");
        Objects.requireNonNull(value, "value must not be null");
        console = console == null ? "" : console;
        Objects.requireNonNull(executionTime, "executionTime must not be null");
        if (executionTime.isNegative()) {
            throw new IllegalArgumentException("executionTime must not be negative: " + executionTime);
        }
        // Map.copyOf returns an immutable map as it is, so withHits on a hit copies nothing
        toolVersions = toolVersions == null ? Map.of() : Map.copyOf(toolVersions);
        Objects.requireNonNull(createdAt, "createdAt must not be null");
        Objects.requireNonNull(expiresAt, "expiresAt must not be null");
        if (expiresAt.isBefore(createdAt)) {
            throw new IllegalArgumentException("expiresAt " + expiresAt + " is before createdAt " + createdAt);
        }
        if (hits < 0) {
            throw new IllegalArgumentException("hits must not be negative: " + hits);
        }
        label = label(label);
    }

    /** A new entry with a label: its checksum is made from its value and console. */
    public CacheEntry(String key, String value, String console, Duration executionTime,
            Map<String, String> toolVersions, Instant createdAt, Instant expiresAt, long hits, String label) {
        this(key, value, console, executionTime, toolVersions, createdAt, expiresAt, hits, label,
                checksumOf(Objects.requireNonNull(value, "value must not be null"), console == null ? "" : console));
    }

    /** A new entry without a label: its checksum is made from its value and console. */
    public CacheEntry(String key, String value, String console, Duration executionTime,
            Map<String, String> toolVersions, Instant createdAt, Instant expiresAt, long hits) {
        this(key, value, console, executionTime, toolVersions, createdAt, expiresAt, hits, "");
    }

    /** One line of at most {@link #MAX_LABEL_LENGTH} characters, control characters as spaces. */
    public static String label(String text) {
        if (text == null) {
            return "";
        }
        if (isOneShortLine(text)) {
            return text;
        }
        String line = CONTROL.matcher(text).replaceAll(" ").strip();
        return line.length() <= MAX_LABEL_LENGTH ? line : line.substring(0, MAX_LABEL_LENGTH - 1) + "\u2026";
    }

    /** What {@link #label} would keep as it is: the label of an entry read back from a store, on every hit. */
    private static boolean isOneShortLine(String text) {
        if (text.length() > MAX_LABEL_LENGTH) {
            return false;
        }
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                return false;
            }
        }
        return text.isEmpty() || !Character.isWhitespace(text.charAt(0)) && !Character.isWhitespace(text.charAt(text.length() - 1));
    }

    /**
     * The tools the result depended on, with their versions (without the records of
     * {@link #nondeterminism()} and {@link #toolAnswerBytes()}).
     */
    public Map<String, String> dependsOnTools() {
        if (!toolVersions.containsKey(NONDETERMINISM) && !toolVersions.containsKey(TOOL_ANSWER_BYTES)
                && !toolVersions.containsKey(TRACE) && !toolVersions.containsKey(VALIDATOR)) {
            return toolVersions;
        }
        Map<String, String> tools = new TreeMap<>(toolVersions);
        tools.keySet().removeIf(name -> name.startsWith(RESERVED_PREFIX));
        return Map.copyOf(tools);
    }

    /** The bytes of tool answers the stored run consumed; 0 for none (or an entry stored before they were kept). */
    public long toolAnswerBytes() {
        String bytes = toolVersions.get(TOOL_ANSWER_BYTES);
        if (bytes == null) {
            return 0;
        }
        try {
            return Math.max(0, Long.parseLong(bytes));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** The sources of non-determinism the stored run's code used ({@code Date.now}, ...); empty for none. */
    public Set<String> nondeterminism() {
        String sources = toolVersions.get(NONDETERMINISM);
        return sources == null || sources.isEmpty() ? Set.of()
                : Set.copyOf(Arrays.asList(sources.split(",")));
    }

    /** The tools a run depended on, and the sources of non-determinism it used, as an entry keeps them. */
    public static Map<String, String> dependencies(Map<String, String> tools, Set<String> nondeterminism) {
        if (nondeterminism.isEmpty()) {
            return tools;
        }
        Map<String, String> all = new TreeMap<>(tools);
        all.put(NONDETERMINISM, String.join(",", new TreeSet<>(nondeterminism)));
        return all;
    }

    public boolean isExpiredAt(Instant now) {
        return !now.isBefore(expiresAt);
    }

    public CacheEntry withHits(long newHits) {
        return new CacheEntry(key, value, console, executionTime, toolVersions, createdAt, expiresAt, newHits, label,
                checksum);
    }

    public CacheEntry withLabel(String newLabel) {
        return new CacheEntry(key, value, console, executionTime, toolVersions, createdAt, expiresAt, hits, newLabel,
                checksum);
    }

    /** Whether the value and console are those the checksum was made from. */
    public boolean isIntact() {
        return checksumOf(value, console) == checksum;
    }

    /**
     * CRC32C (hardware-accelerated in the JDK): it guards against damage, not forgery (a fleet
     * key's HMAC does that), at a fraction of the cost of the SHA-256 of the same bytes.
     */
    static long checksumOf(String value, String console) {
        CRC32C crc = new CRC32C();
        crc.update(value.getBytes(StandardCharsets.UTF_8));
        crc.update(0);
        crc.update(console.getBytes(StandardCharsets.UTF_8));
        return crc.getValue();
    }

    /** A rough size in bytes of what a store keeps for this entry. */
    public long estimatedBytes() {
        long bytes = 64L + 2L * (key.length() + value.length() + console.length() + label.length());
        for (Map.Entry<String, String> tool : toolVersions.entrySet()) {
            bytes += 2L * (tool.getKey().length() + tool.getValue().length());
        }
        return bytes;
    }

    private static void requireText(String text, String name) {
        if (text == null || text.isEmpty()) {
            throw new IllegalArgumentException(name + " must not be empty");
        }
    }
}
