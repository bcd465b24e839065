package dev.execache.core;

import java.util.regex.Pattern;

/** Shell-style glob: {@code *} matches any run of characters, {@code ?} one character. */
public final class Glob {
    private final String glob;
    private final Pattern pattern;

    private Glob(String glob) {
        this.glob = glob;
        StringBuilder regex = new StringBuilder();
        StringBuilder literal = new StringBuilder();
        for (char c : glob.toCharArray()) {
            if (c == '*' || c == '?') {
                if (literal.length() > 0) {
                    regex.append(Pattern.quote(literal.toString()));
                    literal.setLength(0);
                }
                regex.append(c == '*' ? ".*" : ".");
            } else {
                literal.append(c);
            }
        }
        if (literal.length() > 0) {
            regex.append(Pattern.quote(literal.toString()));
        }
        this.pattern = Pattern.compile(regex.toString(), Pattern.DOTALL);
    }

    /** @throws IllegalArgumentException if the glob is null or blank */
    public static Glob of(String glob) {
        if (glob == null || glob.isBlank()) {
            throw new IllegalArgumentException("glob must not be blank");
        }
        return new Glob(glob);
    }

    public boolean matches(String text) {
        return pattern.matcher(text).matches();
    }


    /** Globs are equal when they are written the same. */
    @Override
    public boolean equals(Object other) {
        return other instanceof Glob that && glob.equals(that.glob);
    }

    @Override
    public int hashCode() {
        return glob.hashCode();
    }

    @Override
    public String toString() {
        return glob;
    }
}
