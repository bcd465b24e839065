package dev.execache.sandbox;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** A process's resident memory as Linux reports it; everything it allocated, not only V8's heap. */
final class ResidentMemory {
    private static final Path PROC = Path.of("/proc");
    private static final boolean AVAILABLE = Files.isRegularFile(PROC.resolve("self").resolve("status"));

    private ResidentMemory() {
    }

    /** Kibibytes resident, or -1 when unknown (no /proc, or the process is gone). */
    static long kibibytes(long pid) {
        if (!AVAILABLE) {
            return -1;
        }
        try {
            String status = new String(Files.readAllBytes(PROC.resolve(Long.toString(pid)).resolve("status")),
                    StandardCharsets.US_ASCII);
            int at = status.indexOf("VmRSS:");
            if (at < 0) {
                return -1;
            }
            int pos = at + "VmRSS:".length();
            while (pos < status.length() && (status.charAt(pos) == ' ' || status.charAt(pos) == '\t')) {
                pos++;
            }
            long value = 0;
            while (pos < status.length() && Character.isDigit(status.charAt(pos))) {
                value = value * 10 + (status.charAt(pos++) - '0');
            }
            return value;
        } catch (IOException e) {
            return -1;
        }
    }
}
