package dev.execache.mcp.server.stdio;

import dev.execache.mcp.server.protocol.JsonText;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;

/** Writes JSON-RPC messages one per line, each whole (under a lock), from any thread. */
final class LineWriter {
    private static final System.Logger LOG = System.getLogger("dev.execache.mcp.server");

    private final OutputStream out;

    LineWriter(OutputStream out) {
        this.out = out;
    }

    /** Writes one message as one line: a line break inside it is written as the escape {@code \n}. */
    void write(String json) throws IOException {
        // looked for as characters first: a search for a string is several times slower, and almost no answer has one
        String oneLine = json.indexOf('\n') < 0 && json.indexOf('\r') < 0 ? json
                : json.replace("\r\n", "\\n").replace("\n", "\\n").replace("\r", "\\n");
        byte[] bytes = (JsonText.escapeLoneSurrogates(oneLine) + "\n").getBytes(StandardCharsets.UTF_8);
        synchronized (out) {
            out.write(bytes);
            out.flush();
        }
    }

    /** Writes, or when the output is gone (the client left) only notes it. */
    void writeOrNote(String json) {
        try {
            write(json);
        } catch (IOException e) {
            LOG.log(Level.DEBUG, "cannot write to standard output: " + e);
        }
    }
}
