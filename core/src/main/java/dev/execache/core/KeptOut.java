package dev.execache.core;

import dev.execache.core.spi.Counter;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * What code mode kept out of the agent's context in one run: the tool answers the code consumed
 * stay in the sandbox, and only the result reaches the agent.
 *
 * @param toolAnswerBytes bytes (UTF-8) of the tool answers the code consumed
 * @param resultBytes bytes (UTF-8) of what the run returned to the agent: its result's JSON and its console output
 * @param toolAnswerBytesByTool {@code toolAnswerBytes} by tool ({@code SERVER__TOOL}); empty for a hit, which called none
 */
public record KeptOut(long toolAnswerBytes, long resultBytes, Map<String, Long> toolAnswerBytesByTool) {
    /** The estimate's rule: about four bytes of English text or JSON per token of a language model. */
    public static final int BYTES_PER_TOKEN = 4;
    public static final KeptOut NONE = new KeptOut(0, 0, Map.of());

    public KeptOut {
        if (toolAnswerBytes < 0 || resultBytes < 0) {
            throw new IllegalArgumentException("toolAnswerBytes and resultBytes must not be negative: " + toolAnswerBytes
                    + ", " + resultBytes);
        }
        toolAnswerBytesByTool = toolAnswerBytesByTool == null ? Map.of()
                : Collections.unmodifiableMap(new TreeMap<>(toolAnswerBytesByTool));
    }

    /** The bytes kept out: the tool answers consumed minus the result returned, not below zero. */
    public long bytes() {
        return Math.max(0, toolAnswerBytes - resultBytes);
    }

    /** {@link #bytes} as tokens of a language model, estimated as bytes / {@link #BYTES_PER_TOKEN}. */
    public long estimatedTokens() {
        return estimatedTokens(bytes());
    }

    public static long estimatedTokens(long bytes) {
        return bytes / BYTES_PER_TOKEN;
    }

    /** Adds the bytes kept out, when there are any, to a call's counts. */
    void addTo(Map<Counter, Long> counts) {
        if (bytes() > 0) {
            counts.put(Counter.KEPT_OUT_BYTES, bytes());
        }
    }
}
