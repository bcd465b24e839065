package dev.execache.core;

import dev.execache.core.spi.StoreCounters;

/**
 * Who asked: every run and tool call is counted for an agent (an MCP client's name, a named
 * HTTP token's name, {@link #CLI} for a person at a terminal). An agent's name becomes a store key
 * and a metric label, so it is kept short and plain.
 */
public final class Agents {
    /** Runs a person started from a terminal ({@code execache run}). */
    public static final String CLI = "cli";
    /** Calls of an MCP client that gave no name, over a token that has none. */
    public static final String UNKNOWN = "unknown";
    /** Calls of agents past the store's cap on distinct agents. */
    public static final String OTHER = StoreCounters.OTHER_AGENT;
    /** The longest name kept; a longer one is cut. */
    public static final int MAX_LENGTH = 64;

    private Agents() {
    }

    /**
     * {@code raw} as an agent's name: letters, digits, {@code .}, {@code _} and {@code -} kept, any
     * other run of characters as one {@code -}, at most {@link #MAX_LENGTH} characters; null when
     * nothing is left (or {@code raw} is null).
     */
    public static String name(String raw) {
        if (raw == null) {
            return null;
        }
        StringBuilder name = new StringBuilder(Math.min(raw.length(), MAX_LENGTH));
        for (int i = 0; i < raw.length() && name.length() < MAX_LENGTH; i++) {
            char c = raw.charAt(i);
            boolean plain = c < 0x80 && (Character.isLetterOrDigit(c) || c == '.' || c == '_' || c == '-');
            if (plain) {
                name.append(c);
            } else if (name.length() > 0 && name.charAt(name.length() - 1) != '-') {
                name.append('-');
            }
        }
        while (name.length() > 0 && name.charAt(name.length() - 1) == '-') {
            name.setLength(name.length() - 1);
        }
        return name.length() == 0 ? null : name.toString();
    }

    /** The first of the names that is one once made plain ({@link #name}), else {@link #UNKNOWN}. */
    public static String firstOf(String... candidates) {
        for (String candidate : candidates) {
            String name = name(candidate);
            if (name != null) {
                return name;
            }
        }
        return UNKNOWN;
    }
}
