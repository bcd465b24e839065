package dev.execache.cli.output;

/**
 * How chatty this one command line is. Made per command line and handed to the commands
 * (not a static), so several command lines can run in one process side by side.
 */
public final class Console {
    private volatile boolean quiet;
    private volatile boolean terminal;

    public boolean quiet() {
        return quiet;
    }

    public void quiet(boolean quiet) {
        this.quiet = quiet;
    }

    /** Whether the command line's stdout is a terminal (one that can be redrawn in place). */
    public boolean terminal() {
        return terminal;
    }

    public void terminal(boolean terminal) {
        this.terminal = terminal;
    }
}
