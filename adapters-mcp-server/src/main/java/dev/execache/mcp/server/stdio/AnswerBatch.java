package dev.execache.mcp.server.stdio;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/** The answers to the requests of one JSON-RPC batch, written together as one array once all are in. */
final class AnswerBatch {
    private final Consumer<String> write;
    private final List<String> lines = new ArrayList<>();
    private int expected;

    AnswerBatch(Consumer<String> write) {
        this.write = write;
    }

    synchronized void expect() {
        expected++;
    }

    void add(String line) {
        String array;
        synchronized (this) {
            lines.add(line);
            array = lines.size() >= expected ? "[" + String.join(",", lines) + "]" : null;
        }
        if (array != null) {
            write.accept(array);
        }
    }

    /** A cancelled request of the batch gets no answer. */
    void skip() {
        String array;
        synchronized (this) {
            expected--;
            array = !lines.isEmpty() && lines.size() >= expected ? "[" + String.join(",", lines) + "]" : null;
        }
        if (array != null) {
            write.accept(array);
        }
    }
}
