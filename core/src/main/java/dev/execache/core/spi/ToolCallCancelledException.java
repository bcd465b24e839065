package dev.execache.core.spi;

import java.util.concurrent.CancellationException;

/**
 * A tool call given up because the run that made it ended (a timeout, the memory limit, a
 * cancel) before its answer came.
 */
public final class ToolCallCancelledException extends CancellationException {
    private final boolean reachedTool;

    /**
     * @param reachedTool whether the call had been sent to the tool when it was cancelled: if
     *     so, the tool may have done what it was asked; if not, it did nothing
     */
    public ToolCallCancelledException(String message, boolean reachedTool) {
        super(message);
        this.reachedTool = reachedTool;
    }

    public boolean reachedTool() {
        return reachedTool;
    }
}
