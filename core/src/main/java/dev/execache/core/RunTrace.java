package dev.execache.core;

import dev.execache.core.spi.CacheEntry;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What a run read (a verifying trace, as Shake keeps for a build rule): each tool call it made, in
 * order, and the digest of the answer it got. A run is a pure function of its code, its context and
 * those answers, so when the same calls give the same answers again its stored result still holds.
 *
 * <p>Kept in the entry under the reserved name {@link CacheEntry#TRACE} among its tool versions,
 * as {@link CacheEntry#NONDETERMINISM} is: every store keeps it, a fleet key signs it, and no
 * store's format changes. One line per call: {@code seen server tool version answerDigest arguments},
 * the arguments last (canonical JSON never holds a raw line break, JSON.stringify neither).
 *
 * @param steps the calls, in the order the code made them
 */
record RunTrace(List<Step> steps) {
    /** The longest trace kept, in characters; a run that read more is kept without one (it is run again when stale). */
    static final int MAX_CHARS = 64 * 1024;

    RunTrace {
        steps = List.copyOf(steps);
    }

    /**
     * One call of the run.
     *
     * @param seen how many of the run's earlier calls the code could have read the answers of when
     *     it made this one: its arguments depend on no later answer
     * @param server the server as the code named it
     * @param tool the tool as the code named it
     * @param version the tool's version when it answered
     * @param answerDigest 128 bits of the SHA-256 of the answer's JSON
     * @param arguments the arguments as the code sent them (JSON)
     */
    record Step(int seen, String server, String tool, String version, String answerDigest, String arguments) {
        String argumentsDigest() {
            return CacheKeys.sha256(arguments);
        }

        /** The catalog's name of the tool ({@code SERVER__TOOL}). */
        String name() {
            return server + "__" + tool;
        }
    }

    static String digestOf(ToolResult answer) {
        return CacheKeys.sha256((answer.isError() ? "error\n" : "value\n") + answer.json());
    }

    /** Whether a step with these parts can be written as one line. */
    static boolean writable(String server, String tool, String version, String arguments) {
        return plainWord(server) && plainWord(tool) && plainWord(version) && arguments.indexOf('\n') < 0
                && arguments.indexOf('\r') < 0;
    }

    private static boolean plainWord(String word) {
        if (word == null || word.isEmpty()) {
            return false;
        }
        for (int i = 0; i < word.length(); i++) {
            if (Character.isWhitespace(word.charAt(i)) || Character.isISOControl(word.charAt(i))) {
                return false;
            }
        }
        return true;
    }

    /** The text an entry keeps; empty when it would be longer than {@link #MAX_CHARS}. */
    Optional<String> write() {
        StringBuilder text = new StringBuilder();
        for (Step step : steps) {
            text.append(step.seen()).append(' ').append(step.server()).append(' ').append(step.tool()).append(' ')
                    .append(step.version()).append(' ').append(step.answerDigest()).append(' ')
                    .append(step.arguments()).append('\n');
            if (text.length() > MAX_CHARS) {
                return Optional.empty();
            }
        }
        return Optional.of(text.toString());
    }

    /** The trace {@code entry} keeps; empty when it keeps none (a run stored before traces, or one without tool calls). */
    static Optional<RunTrace> of(CacheEntry entry) {
        String text = entry.toolVersions().get(CacheEntry.TRACE);
        return text == null ? Optional.empty() : read(text);
    }

    /** The trace {@link #write} wrote; empty when the text is not one (it is then ignored, never trusted). */
    static Optional<RunTrace> read(String text) {
        List<Step> steps = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (line.isEmpty()) {
                continue;
            }
            String[] parts = line.split(" ", 6);
            if (parts.length != 6) {
                return Optional.empty();
            }
            try {
                int seen = Integer.parseInt(parts[0]);
                if (seen < 0 || seen > steps.size()) {
                    return Optional.empty();
                }
                steps.add(new Step(seen, parts[1], parts[2], parts[3], parts[4], parts[5]));
            } catch (NumberFormatException e) {
                return Optional.empty();
            }
        }
        return steps.isEmpty() ? Optional.empty() : Optional.of(new RunTrace(steps));
    }

    /**
     * The calls in rounds that may each be asked at once: a round is the calls, in order, whose
     * arguments depend on no answer of its own round or a later one (their {@code seen} is at most
     * the calls before the round). Code that made its calls together (before reading any answer)
     * gives one round; code that read each answer before its next call, one round per call.
     */
    List<List<Step>> rounds() {
        List<List<Step>> rounds = new ArrayList<>();
        int start = 0;
        while (start < steps.size()) {
            int end = start + 1;
            while (end < steps.size() && steps.get(end).seen() <= start) {
                end++;
            }
            rounds.add(steps.subList(start, end));
            start = end;
        }
        return rounds;
    }
}
