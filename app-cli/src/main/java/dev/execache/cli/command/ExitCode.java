package dev.execache.cli.command;

/** What the process's exit code tells. */
public final class ExitCode {
    public static final int OK = 0;
    static final int CODE_FAILED = 1;
    /** inspect: there is no such entry (as grep exits 1 when nothing matched). */
    public static final int NOT_FOUND = 1;
    public static final int USAGE = 2;
    public static final int INFRASTRUCTURE = 3;

    private ExitCode() {
    }
}
