package dev.execache.cli;

/**
 * How chatty this one command line is. Made per command line and handed to the commands
 * (not a static), so several command lines can run in one process side by side.
 */
final class Console {
    private volatile boolean quiet;

    boolean quiet() {
        return quiet;
    }

    void quiet(boolean quiet) {
        this.quiet = quiet;
    }
}
