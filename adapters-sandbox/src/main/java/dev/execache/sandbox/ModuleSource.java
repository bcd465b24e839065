package dev.execache.sandbox;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * The caller's code as the module the runner imports: the body of an async function that
 * takes {@code context}, as a data: URL (so it needs no read permission and leaves no file).
 */
final class ModuleSource {
    static final String CODE_NAME = "code";
    private static final String HEADER = "export default async function (context) {\n";
    private static final int HEADER_LINES = 1;

    private final String code;
    /** The start of the runner's URL, enough to know its frames in a stack trace. */
    private final String runnerUrl;
    private final int codeLines;

    ModuleSource(String code, String runnerUrl) {
        this.code = code;
        this.runnerUrl = runnerUrl;
        this.codeLines = (int) code.lines().count();
    }

    String dataUrl() {
        String module = HEADER + code + "\n}\n";
        return "data:application/typescript;base64,"
                + Base64.getEncoder().encodeToString(module.getBytes(StandardCharsets.UTF_8));
    }

    String runnerUrl() {
        return runnerUrl;
    }

    /** A line and column in the module as {line, column} in the caller's code, 1-based. */
    int[] position(int moduleLine, int moduleColumn) {
        int line = moduleLine - HEADER_LINES;
        if (line < 1) {
            return new int[] {1, 1};
        }
        if (line > Math.max(1, codeLines)) {
            String[] lines = code.split("\\R", -1);
            String last = lines.length == 0 ? "" : lines[Math.max(0, Math.min(lines.length, codeLines) - 1)];
            return new int[] {Math.max(1, codeLines), last.length() + 1};
        }
        return new int[] {line, Math.max(1, moduleColumn)};
    }
}
