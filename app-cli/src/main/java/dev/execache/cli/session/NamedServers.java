package dev.execache.cli.session;

import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The servers code names, read from its text without parsing it, so that a run starts only those: code reaches a
 * server only through the sandbox's {@code tools} ({@code tools.SERVER.TOOL(..)} or {@code tools["SERVER"]}), so
 * code whose every mention of {@code tools} is followed by a name can reach those servers, and code that mentions
 * {@code tools} nowhere reaches none. A mention followed by anything else ({@code const t = tools},
 * {@code tools[name]}, the word in a comment or a string) may reach any server. Code that reaches {@code tools} some
 * way its text does not show (an {@code eval} of a made-up name) finds only the servers it names: the others were
 * not started.
 */
public final class NamedServers {
    /** {@code tools} as a word (not part of {@code mytools}, {@code tools2} or an escape). */
    private static final Pattern MENTION = Pattern.compile("(?<![\\p{L}\\p{N}_$\\\\])tools(?![\\p{L}\\p{N}_$])");
    private static final Pattern DOT_NAME = Pattern.compile("\\s*\\??\\.\\s*([\\p{L}_$][\\p{L}\\p{N}_$]*)");
    private static final Pattern BRACKET_NAME =
            Pattern.compile("\\s*(?:\\?\\.)?\\s*\\[\\s*(?:\"([^\"\\\\\\n]*)\"|'([^'\\\\\\n]*)')\\s*]");

    private NamedServers() {
    }

    /** The servers {@code code} names; empty when it may reach any of them (see the class comment). */
    public static Optional<Set<String>> in(String code) {
        Set<String> named = new TreeSet<>();
        Matcher mention = MENTION.matcher(code);
        while (mention.find()) {
            Matcher dot = DOT_NAME.matcher(code).region(mention.end(), code.length());
            if (dot.lookingAt()) {
                named.add(dot.group(1));
                continue;
            }
            Matcher bracket = BRACKET_NAME.matcher(code).region(mention.end(), code.length());
            if (bracket.lookingAt()) {
                named.add(bracket.group(1) != null ? bracket.group(1) : bracket.group(2));
                continue;
            }
            return Optional.empty();
        }
        return Optional.of(Set.copyOf(named));
    }
}
