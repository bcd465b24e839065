package dev.execache.cli;

/** What the process's exit code tells. */
final class ExitCode {
    static final int OK = 0;
    static final int CODE_FAILED = 1;
    /** inspect: there is no such entry (as grep exits 1 when nothing matched). */
    static final int NOT_FOUND = 1;
    static final int USAGE = 2;
    static final int INFRASTRUCTURE = 3;

    private ExitCode() {
    }
}
