package dev.execache.cli;

/** Keeps passwords out of what execache prints. */
final class Redaction {
    private Redaction() {
    }

    /** {@code redis://:secret@host:6379/0} becomes {@code redis://:***@host:6379/0}. */
    static String redactUrl(String url) {
        return url == null ? null : url.replaceAll("(?<=://)([^:@/]*):[^@/]*@", "$1:***@");
    }
}
