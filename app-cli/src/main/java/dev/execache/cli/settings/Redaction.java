package dev.execache.cli.settings;

/** Keeps passwords out of what execache prints. */
public final class Redaction {
    private Redaction() {
    }

    /** {@code redis://:secret@host:6379/0} becomes {@code redis://:***@host:6379/0}. */
    public static String redactUrl(String url) {
        return url == null ? null : url.replaceAll("(?<=://)([^:@/]*):[^@/]*@", "$1:***@");
    }
}
