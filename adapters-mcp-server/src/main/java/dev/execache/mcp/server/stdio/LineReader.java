package dev.execache.mcp.server.stdio;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;

/**
 * Reads newline-delimited messages, one line at a time, without its terminator. It scans its own
 * buffer rather than reading byte by byte (each a synchronized call); only the thread reading now
 * uses it, and a thread that takes reading on starts after the last one's last read.
 */
final class LineReader {
    /** At most this much per read: a file stream allocates a native buffer for each larger read. */
    private static final int READ_BYTES = 8192;

    private final InputStream in;
    private final int maxLineBytes;
    private final Runnable tooLong;
    /** Input read but not yet taken as lines: {@code buffer[position..limit)}. */
    private final byte[] buffer = new byte[READ_BYTES];
    private int position;
    private int limit;

    /** @param tooLong told of each line longer than {@code maxLineBytes}, which is then skipped */
    LineReader(InputStream in, int maxLineBytes, Runnable tooLong) {
        this.in = in;
        this.maxLineBytes = maxLineBytes;
        this.tooLong = tooLong;
    }

    int maxLineBytes() {
        return maxLineBytes;
    }

    /** The next line (empty for one that was too long); null at the end of input. */
    byte[] readLine() throws IOException {
        ByteArrayOutputStream line = null;
        boolean over = false;
        boolean ended = false;
        byte[] whole = null;
        while (true) {
            if (position == limit) {
                int read = in.read(buffer, 0, READ_BYTES);
                if (read == -1) {
                    ended = true;
                    break;
                }
                position = 0;
                limit = read;
            }
            int start = position;
            int end = start;
            while (end < limit && buffer[end] != '\n') {
                end++;
            }
            boolean found = end < limit;
            position = found ? end + 1 : end;
            if (found && line == null && end - start <= maxLineBytes) {
                // the usual case: the whole line is in the buffer
                whole = Arrays.copyOfRange(buffer, start, end);
                break;
            }
            if (line == null) {
                line = new ByteArrayOutputStream();
            }
            int room = maxLineBytes - line.size();
            line.write(buffer, start, Math.min(room, end - start));
            over |= end - start > room;
            if (found) {
                break;
            }
        }
        int size = whole != null ? whole.length : line == null ? 0 : line.size();
        if (ended && size == 0) {
            return null;
        }
        if (over) {
            tooLong.run();
            return new byte[0];
        }
        return whole != null ? whole : line.toByteArray();
    }
}
